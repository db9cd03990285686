// A tiny hash router: a few fixed pages need no router library. "#/activity?session=s_x" → page + query.
import { reactive } from "vue";

export const PAGES = ["projects", "sessions", "activity", "changes", "tunnel", "plugins"] as const;
export type PageName = (typeof PAGES)[number];

export const PAGE_TITLES: Record<PageName, string> = {
  projects: "Projects",
  sessions: "Sessions",
  activity: "Activity",
  changes: "Changes",
  tunnel: "Tunnel",
  plugins: "Plugins",
};

const DEFAULT_PAGE: PageName = "sessions";

interface Route {
  page: PageName;
  query: URLSearchParams;
}

function parseHash(hash: string): Route {
  const [path = "", search = ""] = hash.replace(/^#\/?/, "").split("?", 2);
  const page = (PAGES as readonly string[]).includes(path) ? (path as PageName) : DEFAULT_PAGE;
  return { page, query: new URLSearchParams(search) };
}

export const route = reactive<Route>(parseHash(window.location.hash));

window.addEventListener("hashchange", () => Object.assign(route, parseHash(window.location.hash)));

export function hrefTo(page: PageName, params: Record<string, string> = {}): string {
  const search = new URLSearchParams(params).toString();
  return `#/${page}${search ? `?${search}` : ""}`;
}

export function navigate(page: PageName, params: Record<string, string> = {}): void {
  window.location.hash = hrefTo(page, params);
}
