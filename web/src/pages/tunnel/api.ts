// Tunnel page calls: where the public origin comes from, and saving or clearing a manual origin.
import { api } from "../../api/client";
import type { TunnelView } from "../../api/types";

export const fetchTunnel = () => api.get<TunnelView>("/api/tunnel");
export const saveOrigin = (publicOrigin: string | null) => api.put<TunnelView>("/api/tunnel", { publicOrigin });
