// urlbridge/testcontainers: start the urlbridge appliance in a testcontainers suite and get what an agent under
// test needs (Init URL, read and mutation bases, MCP URL) plus the operator's control client. testcontainers/README.md.
export {
  startUrlbridge,
  URLBRIDGE_CONTROL_PORT,
  URLBRIDGE_DATA_PORT,
  URLBRIDGE_PROJECTS_DIR,
  URLBRIDGE_STATE_DIR,
  type StartedUrlbridge,
  type StartUrlbridgeOptions,
  type UrlbridgeHealth,
  type UrlbridgeProjectOptions,
} from "./urlbridge-container.js";
export {
  createUrlbridgeControlClient,
  UrlbridgeApiError,
  type UrlbridgeControlClient,
  type UrlbridgeProject,
  type UrlbridgeSession,
  type UrlbridgeSessionView,
} from "./control-client.js";
