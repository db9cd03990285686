// Login page calls: where the token lives (no secret), and the login itself.
import { api } from "../../api/client";
import type { LoginInfo, WhoAmI } from "../../api/types";

export const fetchLoginInfo = () => api.get<LoginInfo>("/api/login-info");
export const logIn = (token: string) => api.post<WhoAmI>("/api/login", { token });

/** Shown only until /api/login-info answers with this machine's own command. */
export const SHOW_TOKEN_COMMAND_FALLBACK = "docker compose exec bridge urlbridge token --show";
