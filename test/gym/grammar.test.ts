// Grammar-level conformance, no server: every corpus entry and fuzz string, written in every client form
// and rewritten by every intermediary, binds to exactly the text that was meant (or is refused, never bent).
import { describe, expect, it } from "vitest";
import { encodeUrlText } from "../../server/url-grammar/encode.js";
import { CORPUS, expectedBytes } from "./corpus.js";
import { FORMS } from "./forms.js";
import { createFuzzer, gymSeed } from "./fuzz.js";
import { QUERY_REWRITES, rewriteTarget } from "./intermediaries.js";
import { bindWriteLike, pairCarries, VIEW_BASE, VIEW_ORIGIN } from "./server-view.js";

const FUZZ_TEXTS = 300;
const seed = gymSeed();
const fuzzer = createFuzzer(seed);
const TEXTS = [
  ...CORPUS.map((e) => ({ name: e.name, text: e.text })),
  ...Array.from({ length: FUZZ_TEXTS }, (_, i) => ({ name: `fuzz-${seed}-${i}`, text: fuzzer.next() })),
];

const sameBytes = (a: string, b: string) => expectedBytes(a).equals(expectedBytes(b));

describe(`grammar conformance (corpus + ${FUZZ_TEXTS} fuzz strings, GYM_SEED=${seed})`, () => {
  it("names every corpus entry once, in kebab-case under a group prefix", () => {
    const names = CORPUS.map((e) => e.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) expect(name).toMatch(/^[a-z0-9]+-[a-z0-9-]+$/);
  });

  it("the reference encoder emits only printable ASCII, never a space, a + or an encoded %", () => {
    for (const { name, text } of TEXTS) {
      const encoded = encodeUrlText(text);
      expect(encoded, name).toMatch(/^[\x21-\x7e]*$/);
      expect(encoded, name).not.toMatch(/\+|%25/);
    }
  });

  const pairs = FORMS.flatMap((f) => QUERY_REWRITES.map((r) => [f, r] as const));
  it.each(pairs.map(([f, r]) => [f.name, r.name, f, r] as const))(
    "%s through %s binds the meant text",
    (_f, _r, form, rewrite) => {
      const failures: string[] = [];
      let checked = 0;
      for (const { name, text } of TEXTS) {
        if (!form.carries(text) || !pairCarries(form.name, rewrite, text)) continue;
        checked += 1;
        const typed = `${VIEW_BASE}/w?${(form.params ?? []).map((p) => `${p}&`).join("")}path=${form.value(text)}&wait=1000&raw=${form.tail(text)}`;
        const wire = rewriteTarget(form.toWire(VIEW_ORIGIN, typed), rewrite);
        const bound = bindWriteLike(wire);
        if (bound.ok) {
          const { path, wait, content } = bound.args;
          if (!sameBytes(path, text) || !sameBytes(content, text) || wait !== 1000) {
            failures.push(
              `${name}: ${JSON.stringify(text)} bound as path=${JSON.stringify(path)} content=${JSON.stringify(content)} wait=${wait} (wire ${wire.slice(0, 160)})`,
            );
          }
        } else if (rewrite.contract === "exact") {
          failures.push(
            `${name}: ${JSON.stringify(text)} refused ${bound.error.code}: ${bound.error.message} (wire ${wire.slice(0, 160)})`,
          );
        }
      }
      expect(checked).toBeGreaterThan(0);
      expect(failures.slice(0, 10)).toEqual([]);
    },
  );
});
