// Stored text never holds a live capability: concealing replaces a generation's tokens with placeholders, and
// revealing gives back exactly the text that was concealed, whatever it held (server/store/capability-text.ts).
import { describe, expect, it } from "vitest";
import {
  concealCapabilities,
  createCapabilityText,
  ENDED_CAPABILITY,
  revealCapabilities,
  type CapabilityTokens,
} from "../../../server/store/capability-text.js";

const tokens = { init: "InitTok1", read: "ReadTok1", mutation: "MutaTok1" };
const MARK = "\uE000";

describe("capability placeholders", () => {
  it.each([
    ["a retry URL", `{"retry":"https://x.example/v0/${tokens.mutation}/w?path=a&run=r1"}`],
    [
      "a read URL and an Init URL",
      `{"read":"http://127.0.0.1:1/v0/${tokens.read}/r?path=a","init":"/v0/init/${tokens.init}"}`,
    ],
    ["a token twice, back to back", `${tokens.read}${tokens.read}`],
    ["text that already holds the mark", `a${MARK}m b${MARK}0 c${MARK}${MARK}r ${MARK}`],
    ["the mark right before a token", `${MARK}${tokens.mutation}`],
    ["no token at all", `{"ok":true,"content":"hello"}`],
    ["the empty text", ""],
  ])("round-trips %s, with no token left in the stored form", (_, text) => {
    const stored = concealCapabilities(text, tokens);
    for (const token of Object.values(tokens)) expect(stored).not.toContain(token);
    expect(revealCapabilities(stored, tokens)).toBe(text);
  });

  it("reveals the tokens it is given (the generation's, read when the row is read)", () => {
    const stored = concealCapabilities(`/v0/${tokens.mutation}/x /v0/${tokens.read}/r`, tokens);
    expect(revealCapabilities(stored, { read: "NewRead1", mutation: "NewMuta1" })).toBe(
      "/v0/NewMuta1/x /v0/NewRead1/r",
    );
  });

  it("reveals a placeholder whose token is gone as an ended capability, never as another session's token", () => {
    const stored = concealCapabilities(`/v0/${tokens.mutation}/x`, tokens);
    expect(revealCapabilities(stored, {})).toBe(`/v0/${ENDED_CAPABILITY}/x`);
  });

  it("round-trips text where a placeholder's letter and what follows would spell another token", () => {
    const tricky = { mutation: "AAAAAAAA", read: "mBBBBBBB" };
    const text = "/v0/AAAAAAAABBBBBBB/ and AAAAAAAAAAAAAAAA";
    const stored = concealCapabilities(text, tricky);
    expect(stored).not.toContain("AAAAAAAA");
    expect(revealCapabilities(stored, tricky)).toBe(text);
  });

  it("leaves other sessions' tokens and look-alikes alone", () => {
    const text = `/v0/OtherTk1/r MutaTok /v0/${tokens.read.toLowerCase()}/r`;
    expect(concealCapabilities(text, tokens)).toBe(text);
  });
});

describe("a generation that ends while its rows are still being written", () => {
  // A rotation deletes the generation's sealed tokens and bumps the store's version: an activity batch flushed or
  // an intent finished after it must still store them as placeholders (found by tokens-at-rest.test.ts under load).
  function storeText() {
    let onRecord: CapabilityTokens = { ...tokens };
    let version = 1;
    const text = createCapabilityText(
      () => onRecord,
      () => version,
    );
    return { text, end: () => ((onRecord = {}), (version += 1)) };
  }

  it("keeps concealing the tokens it was told to retain, while reveal reads them as ended", () => {
    const { text, end } = storeText();
    text.retain("s1", 1);
    end();
    const stored = text.conceal(`{"retry":"https://x.example/v0/${tokens.mutation}/w"}`, "s1", 1);
    for (const token of Object.values(tokens)) expect(stored).not.toContain(token);
    expect(text.reveal(stored, "s1", 1)).toBe(`{"retry":"https://x.example/v0/${ENDED_CAPABILITY}/w"}`);
  });

  it("also keeps the tokens of a generation it concealed with before it ended", () => {
    const { text, end } = storeText();
    expect(text.conceal(tokens.read, "s1", 1)).not.toContain(tokens.read);
    end();
    expect(text.conceal(`late ${tokens.read}`, "s1", 1)).not.toContain(tokens.read);
  });

  it("cannot conceal what it never saw: a generation first met after it ended stays as written", () => {
    const { text, end } = storeText();
    end();
    expect(text.conceal(tokens.read, "s1", 1)).toBe(tokens.read);
  });
});
