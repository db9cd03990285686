// A counter bumped by every write to projects, sessions or capabilities, so lookups that run on every
// data-plane call can be cached in memory and dropped the moment any scope changes.
export interface ScopeVersion {
  value: number;
}

export function createScopeVersion(): ScopeVersion {
  return { value: 0 };
}
