#!/usr/bin/env node
// Content-addressed image tags: urlbridge:<version>-<hash>, the hash taken over exactly the files the Dockerfile
// builds from (the .dockerignore allowlist, the Dockerfile and the lockfile). The same content always gives the
// same tag, so `build` reuses an image that exists instead of building it again; the image carries the same hash
// as its buildId (Dockerfile: `image-tag.mjs hash` inside the build, shown by /api/health). deploy/UPGRADE.md.
//
//   node scripts/image-tag.mjs hash  [--context <dir>]   the content hash (12 hex digits)
//   node scripts/image-tag.mjs tag   [--context <dir>]   the image reference, e.g. urlbridge:0.1.0-3f9c0a1b2d4e
//   node scripts/image-tag.mjs build [--context <dir>]   builds that tag unless it exists; prints it last
//   node scripts/image-tag.mjs use <tag> [--env-file .env]  points compose at <tag> (URLBRIDGE_IMAGE in .env)
import { createHash } from "node:crypto";
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const IMAGE_REPOSITORY = "urlbridge";
export const HASH_LENGTH = 12;
/** What the build context holds (.dockerignore's allowlist) plus the Dockerfile itself. */
const INPUT_FILES = ["Dockerfile", "package.json", "package-lock.json", "tsconfig.json"];
const INPUT_DIRS = ["server", "web", "bin", "plugins", "scripts", "native"];
/** Never part of the context (.dockerignore): installed or generated, or local secrets. */
const SKIPPED_DIRS = new Set(["node_modules", "dist"]);
const skippedFile = (name) => name.endsWith(".log") || name === ".env";

function listFiles(context, rel, out) {
  const abs = path.join(context, rel);
  for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
    const child = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) listFiles(context, child, out);
    } else if (entry.isFile() && !skippedFile(entry.name)) {
      out.push(child);
    }
  }
}

/** The files that decide the image's content, as sorted POSIX paths relative to the context. */
export function imageInputs(context) {
  const files = INPUT_FILES.filter((f) => fs.existsSync(path.join(context, f)));
  for (const dir of INPUT_DIRS) if (fs.existsSync(path.join(context, dir))) listFiles(context, dir, files);
  return files.sort();
}

/** sha256 over every input's path and content digest; the first HASH_LENGTH hex digits. */
export function contentHash(context) {
  const hash = createHash("sha256");
  for (const file of imageInputs(context)) {
    const digest = createHash("sha256")
      .update(fs.readFileSync(path.join(context, file)))
      .digest("hex");
    hash.update(`${file}\0${digest}\n`);
  }
  return hash.digest("hex").slice(0, HASH_LENGTH);
}

export function imageTag(context) {
  const { version } = JSON.parse(fs.readFileSync(path.join(context, "package.json"), "utf8"));
  return `${IMAGE_REPOSITORY}:${version}-${contentHash(context)}`;
}

const imageExists = (tag) => spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0;

/** What compose builds and runs when .env names no URLBRIDGE_IMAGE (compose.yaml `image:`). */
export const COMPOSE_DEFAULT_IMAGE = `${IMAGE_REPOSITORY}:local`;

/** The content hash an image was built from (dist/BUILD_ID, written by the Dockerfile), or undefined. */
export function builtHash(image) {
  if (!imageExists(image)) return undefined;
  const read = spawnSync(
    "docker",
    ["run", "--rm", "--network", "none", "--entrypoint", "cat", image, "/app/dist/BUILD_ID"],
    {
      encoding: "utf8",
    },
  );
  return read.status === 0 ? read.stdout.trim() : undefined;
}

/**
 * Builds through `docker compose build` when the context holds compose.yaml, so the content tag and compose's own
 * builds share one builder and one layer cache (BuildKit where compose has it); plain `docker build` otherwise.
 */
function build(context, tag) {
  const stdio = ["ignore", process.stderr, process.stderr];
  if (fs.existsSync(path.join(context, "compose.yaml"))) {
    execFileSync("docker", ["compose", "build", "bridge"], {
      cwd: context,
      stdio,
      env: { ...process.env, URLBRIDGE_IMAGE: tag },
    });
    return;
  }
  execFileSync("docker", ["build", "--tag", tag, context], { stdio });
}

/** The image compose runs now: URLBRIDGE_IMAGE from the environment or the env file, else urlbridge:local. */
export function composeImages(envFile) {
  const lines = fs.existsSync(envFile) ? fs.readFileSync(envFile, "utf8").split("\n") : [];
  const fromFile = lines
    .find((line) => /^\s*URLBRIDGE_IMAGE=/.test(line))
    ?.split("=")[1]
    ?.trim();
  return [...new Set([process.env.URLBRIDGE_IMAGE, fromFile, COMPOSE_DEFAULT_IMAGE].filter(Boolean))];
}

/**
 * The content tag for the context: reused when it exists; tagged onto the image compose built when that holds the
 * same content (no second build: issue 32); built otherwise. Returns the tag and where it came from.
 */
export function buildImage(context, envFile = path.join(context, ".env")) {
  const tag = imageTag(context);
  if (imageExists(tag)) return { tag, built: false, from: tag };
  const hash = contentHash(context);
  const same = composeImages(envFile).find((image) => builtHash(image) === hash);
  if (same) {
    execFileSync("docker", ["tag", same, tag]);
    return { tag, built: false, from: same };
  }
  build(context, tag);
  return { tag, built: true, from: tag };
}

/** Sets URLBRIDGE_IMAGE=<tag> in the env file (keeping every other line), after checking the image exists. */
export function useImage(tag, envFile) {
  if (!imageExists(tag)) {
    throw new Error(
      `no image ${tag} on this machine (docker image ls ${IMAGE_REPOSITORY}); build it from its sources with \`node scripts/image-tag.mjs build\``,
    );
  }
  const lines = fs.existsSync(envFile) ? fs.readFileSync(envFile, "utf8").split("\n") : [];
  const kept = lines.filter((line) => !/^\s*URLBRIDGE_IMAGE=/.test(line));
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  const previous = lines
    .find((line) => /^\s*URLBRIDGE_IMAGE=/.test(line))
    ?.split("=")[1]
    ?.trim();
  fs.writeFileSync(envFile, `${[...kept, `URLBRIDGE_IMAGE=${tag}`].join("\n")}\n`);
  return { previous };
}

function option(args, name, fallback) {
  const at = args.indexOf(name);
  if (at === -1) return fallback;
  const value = args[at + 1];
  if (!value) throw new Error(`${name} needs a value`);
  args.splice(at, 2);
  return value;
}

function main(argv) {
  const args = [...argv];
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
  const context = path.resolve(option(args, "--context", root));
  const envFile = path.resolve(option(args, "--env-file", path.join(root, ".env")));
  const [command, ...rest] = args;
  switch (command) {
    case "hash":
      console.log(contentHash(context));
      return;
    case "tag":
      console.log(imageTag(context));
      return;
    case "build": {
      const started = Date.now();
      const { tag, built, from } = buildImage(context, envFile);
      const seconds = Math.round((Date.now() - started) / 1000);
      console.error(
        built
          ? `image-tag: built ${tag} in ${seconds} s`
          : from === tag
            ? `image-tag: ${tag} exists (same content), reused`
            : `image-tag: ${from} holds the same content (buildId ${contentHash(context)}): tagged it ${tag}, nothing rebuilt`,
      );
      console.log(tag);
      return;
    }
    case "use": {
      if (rest.length !== 1) throw new Error("use takes one image tag, e.g. use urlbridge:0.1.0-3f9c0a1b2d4e");
      const { previous } = useImage(rest[0], envFile);
      console.error(
        `image-tag: ${path.basename(envFile)} now names ${rest[0]}${previous ? ` (was ${previous}; roll back with: node scripts/image-tag.mjs use ${previous})` : ""}`,
      );
      console.error("image-tag: apply it with: docker compose up -d");
      return;
    }
    default:
      throw new Error(`unknown command "${command ?? ""}"; use hash, tag, build or use <tag>`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (error) {
    console.error(`image-tag: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
