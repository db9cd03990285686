// Runs once before the suite: builds the sandbox launcher the terminal tests run commands through.
// @ts-expect-error -- a plain .mjs build script without type declarations
import { buildNative } from "../scripts/build-native.mjs";

export default function setup(): void {
  buildNative({ quiet: true });
}
