// A session name's bounds, shared by the control API's schema and the UI's rename field (no dependencies).

/** The longest session name, in characters (the UI's card title and the CLI's table column). */
export const MAX_SESSION_NAME = 64;
