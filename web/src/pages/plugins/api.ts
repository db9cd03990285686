// Plugins page call: installed plugins with their status and tool count.
import { api } from "../../api/client";
import type { PluginSummary } from "../../api/types";

export const listPlugins = () => api.get<PluginSummary[]>("/api/plugins");
