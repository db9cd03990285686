// The Init prompt an operator pastes into any agent's chat: model-neutral, carrying only the live Init URL.
// Shared by the UI and the CLI so both hand out the same words. No Node imports: the browser bundles it.

export function buildInitPrompt(initUrl: string): string {
  return [
    "You have hands on a project folder through urlbridge, using only your ability to fetch URLs.",
    "",
    "Start by fetching this Init URL and reading the whole response:",
    initUrl,
    "",
    "It gives your base URLs, the routes you may call and their rules. Every operation is one plain GET: " +
      "use URLs exactly as the bridge returns them, put file content after raw= at the very end, and when a " +
      "response offers a repair URL, fetch it as given. Read files before you change them, keep these URLs " +
      "private, and tell me what you changed.",
  ].join("\n");
}
