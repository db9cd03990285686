// Runs once before the e2e suite: builds the package's testcontainers module into dist/ (examples/ import it by
// package name, as its users do) and the appliance image under its content tag, which vitest.e2e.config.ts names in
// URLBRIDGE_IMAGE (the module's default image). Test files that call buildBridgeImage() find it and reuse it.
import { execFileSync } from "node:child_process";
import { REPO_ROOT, buildBridgeImage } from "./support/containers.js";

export default async function setup(): Promise<void> {
  execFileSync("npm", ["run", "--silent", "build:testcontainers"], { cwd: REPO_ROOT, stdio: "inherit" });
  await buildBridgeImage();
}
