// What the agent is told when the Docker engine could not give a command its sandbox container: the engine
// unreachable, the image missing, or another engine failure, each as sandbox_unavailable with what to do next.
import { ErrorCode, ToolError } from "../../errors.js";

/** An engine failure (or a ToolError already worded) as the sandbox_unavailable the agent sees. */
export function sandboxError(error: unknown, image: string): ToolError {
  if (error instanceof ToolError) return error;
  const failure = error as { statusCode?: number; code?: string; message?: string };
  if (failure.code === "ENOENT" || failure.code === "ECONNREFUSED" || failure.code === "EACCES") {
    return new ToolError(
      ErrorCode.sandboxUnavailable,
      "The Docker engine for sandbox containers is not reachable; nothing ran. Retry later; the operator starts Docker or chooses another URLBRIDGE_SANDBOX mode.",
      {
        detail: { reason: "engine_unreachable" },
        retryable: true,
        agentAction: "wait_and_retry",
      },
    );
  }
  if (failure.statusCode === 404 && /image/i.test(failure.message ?? "")) {
    return new ToolError(
      ErrorCode.sandboxUnavailable,
      `The sandbox image ${image} is not on the Docker engine; nothing ran. The operator pulls or builds it, or chooses another image.`,
      {
        detail: { reason: "image_missing", image },
        retryable: false,
        agentAction: "stop",
      },
    );
  }
  return new ToolError(
    ErrorCode.sandboxUnavailable,
    "The project's sandbox container could not be prepared; nothing ran. Retry; if it persists the operator checks the Docker engine.",
    {
      detail: { reason: "engine_error", ...(failure.statusCode !== undefined ? { status: failure.statusCode } : {}) },
      retryable: true,
      agentAction: "wait_and_retry",
    },
  );
}
