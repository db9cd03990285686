// /o beyond JS/TS: Python, Go, Rust and Java outlines from tree-sitter, with line numbers an agent can read
// from (/r offset=line&limit=endLine-line+1 shows exactly the declaration), CRLF files numbered like /r.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentGet, startTestBridge, type AgentSession, type TestBridge } from "../../helpers/bridge.js";
import { writeTree } from "./fixtures.js";

type Decl = {
  kind: string;
  name: string;
  line: number;
  endLine: number;
  exported?: true;
  async?: true;
  members?: Array<{ kind: string; name: string; line: number; static?: true }>;
  declarations?: Decl[];
};
type Body = {
  ok: boolean;
  language: string;
  totalLines: number;
  imports: Array<{ line: number; from: string; names?: string[] }>;
  declarations: Decl[];
  truncated: boolean;
  errorCode?: string;
};

const PYTHON = `import os
from a.b import c as d, e

MAX_SIZE = 10
counter = 0

@dataclass
class Scanner(Base):
    def __init__(self, x):
        self.x = x

    @property
    def size(self):
        return 1

    @staticmethod
    def make():
        return Scanner(1)

async def main():
    pass
`;

const GO = `package main

import (
	"fmt"
	x "os"
)

const Limit, other = 1, 2

type Server struct {
	Addr string
	port int
}

type Handler interface {
	Serve() error
}

func (s *Server) Start() error {
	return nil
}

func main() {
	fmt.Println(x.Args)
}
`;

const RUST = `use std::io::{self, Read};

pub struct Config {
    pub path: String,
}

pub trait Load {
    fn load(&self) -> io::Result<()>;
}

impl Load for Config {
    fn load(&self) -> io::Result<()> {
        Ok(())
    }
}

impl Config {
    pub fn new() -> Config { Config { path: String::new() } }
}

mod inner {
    pub fn helper() {}
}

pub async fn run() {}
`;

const JAVA = `package demo;

import java.util.List;

public class App {
    private static int count;
    public App() {}
    public static void main(String[] args) {}
    interface Listener { void on(); }
}

enum Mode { A, B }
`;

describe("outline (/o) of other languages", () => {
  let t: TestBridge;
  let s: AgentSession;
  beforeAll(async () => {
    t = await startTestBridge();
    writeTree(t.projectDir, {
      "scan.py": PYTHON,
      "main.go": GO,
      "lib.rs": RUST,
      "App.java": JAVA,
      "crlf.py": "import os\r\n\r\ndef f():\r\n    return 1\r\n",
      "x.rb": "puts 1\n",
    });
    s = await t.session();
  });
  afterAll(async () => t.close());

  const outline = (file: string) => agentGet<Body>(`${s.r}/o?path=${file}`);

  it("outlines Python: imports, constants and variables, classes with constructor, getter, static and plain methods, async functions", async () => {
    const body = await outline("scan.py");
    expect(body).toMatchObject({ ok: true, language: "python", totalLines: 21, truncated: false });
    expect(body.imports).toEqual([
      { line: 1, from: "os" },
      { line: 2, from: "a.b", names: ["c as d", "e"] },
    ]);
    expect(body.declarations).toEqual([
      { kind: "const", name: "MAX_SIZE", line: 4, endLine: 4 },
      { kind: "var", name: "counter", line: 5, endLine: 5 },
      {
        kind: "class",
        name: "Scanner",
        line: 7,
        endLine: 18,
        members: [
          { kind: "constructor", name: "__init__", line: 9 },
          { kind: "getter", name: "size", line: 12 },
          { kind: "method", name: "make", line: 16, static: true },
        ],
      },
      { kind: "function", name: "main", line: 20, endLine: 21, async: true },
    ]);
  });

  it("outlines Go: import specs with aliases, exported names, structs with fields, interfaces with methods, methods as Type.Name", async () => {
    const body = await outline("main.go");
    expect(body.language).toBe("go");
    expect(body.imports).toEqual([
      { line: 4, from: "fmt" },
      { line: 5, from: "os", names: ["x"] },
    ]);
    expect(body.declarations.map((d) => [d.kind, d.name, d.line, d.endLine, d.exported ?? false])).toEqual([
      ["const", "Limit", 8, 8, true],
      ["const", "other", 8, 8, false],
      ["struct", "Server", 10, 13, true],
      ["interface", "Handler", 15, 17, true],
      ["method", "Server.Start", 19, 21, true],
      ["function", "main", 23, 25, false],
    ]);
    expect(body.declarations[2]!.members).toEqual([
      { kind: "property", name: "Addr", line: 11 },
      { kind: "property", name: "port", line: 12 },
    ]);
    expect(body.declarations[3]!.members).toEqual([{ kind: "method", name: "Serve", line: 16 }]);
  });

  it("outlines Rust: use, pub items, traits, impls named Trait for Type, associated functions as static, nested modules", async () => {
    const body = await outline("lib.rs");
    expect(body.language).toBe("rust");
    expect(body.imports).toEqual([{ line: 1, from: "std::io::{self, Read}" }]);
    expect(body.declarations.map((d) => [d.kind, d.name, d.line, d.endLine])).toEqual([
      ["struct", "Config", 3, 5],
      ["trait", "Load", 7, 9],
      ["impl", "Load for Config", 11, 15],
      ["impl", "Config", 17, 19],
      ["module", "inner", 21, 23],
      ["function", "run", 25, 25],
    ]);
    expect(body.declarations[0]).toMatchObject({
      exported: true,
      members: [{ kind: "property", name: "path", line: 4 }],
    });
    expect(body.declarations[3]!.members).toEqual([{ kind: "method", name: "new", line: 18, static: true }]);
    expect(body.declarations[4]!.declarations).toEqual([
      { kind: "function", name: "helper", line: 22, endLine: 22, exported: true },
    ]);
    expect(body.declarations[5]).toMatchObject({ exported: true, async: true });
  });

  it("outlines Java: imports, public classes with fields, constructors, static methods and nested types, enums", async () => {
    const body = await outline("App.java");
    expect(body.language).toBe("java");
    expect(body.imports).toEqual([{ line: 3, from: "java.util.List" }]);
    expect(body.declarations).toEqual([
      {
        kind: "class",
        name: "App",
        line: 5,
        endLine: 10,
        exported: true,
        members: [
          { kind: "property", name: "count", line: 6, static: true },
          { kind: "constructor", name: "constructor", line: 7 },
          { kind: "method", name: "main", line: 8, static: true },
        ],
        declarations: [
          {
            kind: "interface",
            name: "Listener",
            line: 9,
            endLine: 9,
            members: [{ kind: "method", name: "on", line: 9 }],
          },
        ],
      },
      { kind: "enum", name: "Mode", line: 12, endLine: 12 },
    ]);
  });

  it("numbers a CRLF file as /r does, so the span reads exactly the declaration", async () => {
    const body = await outline("crlf.py");
    expect(body.declarations).toEqual([{ kind: "function", name: "f", line: 3, endLine: 4 }]);
    const read = await agentGet<Record<string, unknown>>(`${s.r}/r?path=crlf.py&offset=3&limit=2`);
    expect(JSON.stringify(read)).toContain("def f():");
    expect(JSON.stringify(read)).toContain("return 1");
  });

  it("still answers unsupported_language, with a read URL, for a language it has no grammar for", async () => {
    expect(await outline("x.rb")).toMatchObject({ ok: false, errorCode: "unsupported_language" });
  });
});
