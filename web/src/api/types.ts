// API types come from the server's own definitions, so the UI and the server cannot drift apart.
export type * from "../../../server/control/api-types";
