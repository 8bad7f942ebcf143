import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crashReason, permissionFlags, PYODIDE_DIR, PythonSandbox, SandboxBusyError, SandboxClosedError, WORKER_FILE } from '../src/python/sandbox.js';

// The sandbox alone (no store involved): what the code can and cannot reach, and the limits.
// Each run loads a worker (seconds on a busy machine): generous time per test.
describe('the Python sandbox', { timeout: 180_000 }, () => {
  let sandbox: PythonSandbox;
  let server: http.Server;
  let hits = 0;
  let port = 0;
  beforeAll(async () => {
    // A generous limit: the probes' first imports (urllib and what it pulls in) take half a second
    // on an idle machine and many seconds on one shared with other test runs. The time limit
    // itself is tested on a sandbox of its own.
    sandbox = new PythonSandbox({ poolSize: 2, concurrency: 2, timeoutMs: 60_000, memoryMb: 128 });
    sandbox.warm();
    // A server on this machine that the code must not reach.
    server = http.createServer((_req, res) => {
      hits += 1;
      res.end('reached');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await sandbox?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  it('hands the rows to the code and answers its output, stdout and stderr', async () => {
    const result = await sandbox.run(
      'import sys, statistics\nprint("rows:", len(rows))\nprint("careful", file=sys.stderr)\noutput = {"mean": statistics.mean(r["amount"] for r in rows), "names": [r["name"] for r in rows]}',
      [
        { name: 'Ada', amount: 10 },
        { name: 'Bo', amount: 20 },
      ],
    );
    expect(result).toEqual({ stdout: 'rows: 2\n', stderr: 'careful\n', executionError: null, outputData: { mean: 15, names: ['Ada', 'Bo'] } });
    // Without an `output` variable the last expression is the output.
    expect((await sandbox.run('sum(r["amount"] for r in rows)', [{ amount: 2 }, { amount: 3 }])).outputData).toBe(5);
  });

  it('reports the code’s own error as its traceback', async () => {
    const result = await sandbox.run('print("before")\n1 / 0', []);
    expect(result.stdout).toBe('before\n');
    expect(result.executionError).toContain('ZeroDivisionError: division by zero');
    expect(result.executionError).toContain('File "<analysis>", line 2');
    expect(result.outputData).toBeNull();
  });

  it('stops an infinite loop at the time limit', async () => {
    const timed = new PythonSandbox({ poolSize: 0, concurrency: 1, timeoutMs: 3_000, memoryMb: 128 });
    try {
      const result = await timed.run('while True:\n    pass', []);
      expect(result.executionError).toBe('The analysis ran longer than 3 s and was stopped.');
    } finally {
      await timed.close();
    }
  });

  it('stops a memory bomb at the memory limit, whether it takes memory at once or bit by bit', async () => {
    for (const code of ['x = bytearray(10**9)', 'x = []\nwhile True:\n    x.append(bytearray(10**6))']) {
      const result = await sandbox.run(code, []);
      expect(result.executionError, code).toBe('The analysis used more than 128 MB of memory and was stopped.');
    }
  });

  it('reaches no JavaScript bridge, no host file, no socket and no fetch', async () => {
    // Each probe in one run (a worker loads in seconds): the name of the error it met, or what it reached.
    const probes: Record<string, string> = {
      importJs: 'import js',
      importPyodideJs: 'import pyodide_js',
      pyodideHttp: 'from pyodide.http import pyfetch',
      passwd: "open('/etc/passwd').read()",
      etc: 'import os; os.listdir("/etc")',
      socket: `import socket; socket.create_connection(("127.0.0.1", ${port}), timeout=1)`,
      urllib: `import urllib.request; urllib.request.urlopen("http://127.0.0.1:${port}/").read()`,
      httpClient: `import http.client; c = http.client.HTTPConnection("127.0.0.1", ${port}); c.request("GET", "/")`,
      // A JavaScript object reached through the foreign-function module leads nowhere either.
      functionConstructor: 'from pyodide.ffi import to_js; to_js([]).constructor.constructor("return process")()',
      fetchByConstructor: 'from pyodide.ffi import to_js; to_js({}).constructor.constructor("return fetch")()',
      runJs: 'import pyodide.code; pyodide.code.run_js("fetch")',
    };
    const code = [
      'outcomes = {}',
      ...Object.entries(probes).map(
        ([name, probe]) =>
          `try:\n    exec(${JSON.stringify(probe)}, {})\n    outcomes[${JSON.stringify(name)}] = "reached"\nexcept BaseException as e:\n    outcomes[${JSON.stringify(name)}] = type(e).__name__`,
      ),
      'output = outcomes',
    ].join('\n');
    const result = await sandbox.run(code, []);
    expect(result.executionError).toBeNull();
    const outcomes = result.outputData as Record<string, string>;
    expect(Object.keys(outcomes).sort()).toEqual(Object.keys(probes).sort());
    for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).not.toBe('reached');
    expect(outcomes).toMatchObject({
      importJs: 'ModuleNotFoundError',
      importPyodideJs: 'ModuleNotFoundError',
      passwd: 'FileNotFoundError',
      etc: 'FileNotFoundError',
      socket: 'PermissionError',
    });
    // C's way to JavaScript is not importable; rebuilt from the interpreter's built-in modules it
    // ends the run (JavaScript's eval is gone, and the interpreter cannot go on after it), reaching nothing.
    const blocked = await sandbox.run(`import ctypes\nctypes.CDLL(None).emscripten_run_script(b"fetch('http://127.0.0.1:${port}/')")`, []);
    expect(blocked.executionError).toContain('ModuleNotFoundError: import of ctypes halted');
    const rebuilt = await sandbox.run(
      [
        'import _imp, sys, importlib.machinery',
        'sys.modules["_ctypes"] = _imp.create_builtin(importlib.machinery.ModuleSpec("_ctypes", importlib.machinery.BuiltinImporter, origin="built-in"))',
        'del sys.modules["ctypes"]',
        'import ctypes',
        `ctypes.CDLL(None).emscripten_run_script(b"fetch('http://127.0.0.1:${port}/')")`,
      ].join('\n'),
      [],
    );
    expect(rebuilt.executionError).not.toBeNull();
    expect(hits).toBe(0);
  });

  it('two runs never see each other’s state: globals, modules, builtins and files are gone with the worker', async () => {
    const first = await sandbox.run(
      'import builtins, sys, json\nsecret = 42\nbuiltins.leaked = "yes"\njson.leaked = "yes"\nsys.path.append("/tmp/mine")\nopen("/tmp/note.txt", "w").write("private")\noutput = "written"',
      [],
    );
    expect(first.executionError).toBeNull();
    const second = await sandbox.run(
      'import builtins, sys, json, os\noutput = {"secret": "secret" in globals(), "builtins": hasattr(builtins, "leaked"), "module": hasattr(json, "leaked"), "path": "/tmp/mine" in sys.path, "file": os.path.exists("/tmp/note.txt")}',
      [],
    );
    expect(second).toMatchObject({ executionError: null, outputData: { secret: false, builtins: false, module: false, path: false, file: false } });
  });

  it('runs at once as many as it may, and the rest in turn', async () => {
    const results = await Promise.all([1, 2, 3].map((n) => sandbox.run(`output = ${n} * 2`, [])));
    expect(results.map((r) => r.outputData)).toEqual([2, 4, 6]);
  });

  it('refuses a run at once when every slot is taken and the queue is full (PYTHON_QUEUE_LIMIT); the others run', async () => {
    const small = new PythonSandbox({ poolSize: 0, concurrency: 1, queueLimit: 1, timeoutMs: 3_000, memoryMb: 128 });
    try {
      const running = small.run('output = 1', []);
      const queued = small.run('output = 2', []);
      await expect(small.run('output = 3', [])).rejects.toBeInstanceOf(SandboxBusyError);
      expect((await Promise.all([running, queued])).map((r) => r.outputData)).toEqual([1, 2]);
    } finally {
      await small.close();
    }
  });

  it('output that is not JSON is an error, not a crash', async () => {
    const result = await sandbox.run('output = float("nan")', []);
    expect(result.executionError).toMatch(/not JSON/);
  });

  it('a worker that crashes is reported in one short line, without the runtime’s source or a path of the host', async () => {
    const result = await sandbox.run("import os\nos.system('id')", []);
    expect(result.executionError).toMatch(/^The Python sandbox stopped unexpectedly/);
    expect(result.executionError!.length).toBeLessThan(300);
    expect(result.executionError).not.toContain(PYODIDE_DIR);
    expect(result.executionError).not.toMatch(/\/(?:tmp|work|root|home|usr)\//);
    // The reason kept from a worker's stderr: a short line, paths replaced; a line of source text, nothing.
    expect(crashReason("warning\nError: ENOENT: no such file, open '/srv/mapi/data/secret.key'\n")).toBe("Error: ENOENT: no such file, open '<path>'");
    expect(crashReason(`x\n${'var a=function(){return 1};'.repeat(40)}`)).toBeNull();
    expect(crashReason('')).toBeNull();
  });
});

// The issue's escape (the runtime's module reached through sys.modules['pyodide_js._api'], the
// host file system mounted by assigning properties) and its variants, against the walls that
// stop them: Python reaches no JavaScript proxy, and the process it runs in may read nothing
// but Pyodide's files, write nothing, start nothing, and holds none of the server's environment.
describe('the Python sandbox keeps the host out', { timeout: 300_000 }, () => {
  const MARKER = `mapi-marker-${process.pid}-${Date.now()}`;
  let sandbox: PythonSandbox;
  let dataDir: string;
  let secretFile: string;
  let hostWrites: string[];
  beforeAll(() => {
    // The server's environment holds a marker the worker must never see.
    process.env.MAPI_PYTHON_TEST_MARKER = MARKER;
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mapi-python-data-'));
    secretFile = path.join(dataDir, 'secret.key');
    fs.writeFileSync(secretFile, 'sekret-value');
    hostWrites = [path.join(dataDir, 'written.txt'), path.join(os.tmpdir(), `mapi-python-written-${process.pid}.txt`)];
    sandbox = new PythonSandbox({ poolSize: 2, concurrency: 2, timeoutMs: 20_000, memoryMb: 128 });
    sandbox.warm();
  });
  afterAll(async () => {
    delete process.env.MAPI_PYTHON_TEST_MARKER;
    await sandbox?.close();
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    for (const file of hostWrites ?? []) fs.rmSync(file, { force: true });
  });

  const py = (value: string) => JSON.stringify(value);

  it('the pyodide_js._api escape (the host file system mounted by assignment) and its variants reach no host file: no read, no listing, no write, no environment', async () => {
    // Each probe's name, then its code: reaching its end without an exception is "reached".
    const mount = `M.FS.root.mount.opts.root = '/'\nM.FS.root.contents.tmp.node_ops = M.NODEFS.node_ops\nleak = (os.listdir(${py(dataDir)}), open(${py(secretFile)}).read()[:6])`;
    const probes: Record<string, string> = {
      issuePayload: `import sys, os\nM = sys.modules['pyodide_js._api'].public_api._module\n${mount}`,
      importApi: `import os, importlib\nM = importlib.import_module('pyodide_js._api').public_api._module\n${mount}`,
      importPyodideJs: `import os, pyodide_js\nM = pyodide_js._module\n${mount}`,
      importHookProxies: `import os, sys\nM = sys.modules['_pyodide._importhook'].jsfinder.jsproxies['pyodide_js']._module\n${mount}`,
      fsMount: `import sys\nM = sys.modules['pyodide_js']._module\nM.FS.mount(M.NODEFS, {'root': '/'}, '/host')`,
      runJs: `from pyodide.code import run_js\nrun_js('pyodide._module.FS.mount(pyodide._module.NODEFS, {root: "/"}, "/host")')`,
      jsGlobals: 'from js import process\nprocess.env',
      rebuiltCore: [
        'import _imp, importlib.machinery',
        'core = _imp.create_builtin(importlib.machinery.ModuleSpec("_pyodide_core", importlib.machinery.BuiltinImporter, origin="built-in"))',
        'core.to_js([]).constructor.constructor("return process")().env',
      ].join('\n'),
      readSecret: `open(${py(secretFile)}).read()`,
      listDataDir: `import os\nos.listdir(${py(dataDir)})`,
      procEnviron: "open('/proc/self/environ').read()",
      procCwd: "import os\nos.listdir('/proc/self/cwd')",
    };
    const code = [
      'import os',
      'outcomes = {}',
      ...Object.entries(probes).map(
        ([name, probe]) =>
          `try:\n    exec(${py(probe)}, {})\n    outcomes[${py(name)}] = "reached"\nexcept BaseException as e:\n    outcomes[${py(name)}] = type(e).__name__`,
      ),
      // A write goes to Pyodide's memory, never to the host (checked on the host below).
      ...hostWrites.map((file) => `os.makedirs(${py(path.dirname(file))}, exist_ok=True)\nopen(${py(file)}, "w").write("from python")`),
      `output = {"outcomes": outcomes, "environ": dict(os.environ), "markerSeen": ${py(MARKER)} in repr(dict(os.environ))}`,
    ].join('\n');
    const result = await sandbox.run(code, []);
    expect(result.executionError).toBeNull();
    const { outcomes, environ, markerSeen } = result.outputData as { outcomes: Record<string, string>; environ: Record<string, string>; markerSeen: boolean };
    expect(Object.keys(outcomes).sort()).toEqual(Object.keys(probes).sort());
    for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).not.toBe('reached');
    expect(JSON.stringify(result)).not.toContain('sekret');
    expect(markerSeen).toBe(false);
    expect(Object.keys(environ)).not.toContain('MAPI_PYTHON_TEST_MARKER');
    for (const file of hostWrites) expect(fs.existsSync(file), file).toBe(false);
  });

  it('no module in sys.modules, nothing they lead to and no object alive holds a JavaScript proxy; pyodide, _pyodide, pyodide_js and js are not importable', async () => {
    const result = await sandbox.run(
      `
import gc, importlib, sys

def is_js(obj):
    return any(c.__name__ == "JsProxy" for c in type(obj).__mro__)

def classes(root):
    out, todo = [], [root]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(type.__subclasses__(c))
    return out

# The test means something only if the interpreter knows the proxy type.
proxy_type_known = any(c.__name__ == "JsProxy" for c in classes(object))

# Modules and what their attributes lead to, a few steps deep: dicts, lists, classes, instances,
# functions' globals, defaults and closures.
found, seen = [], set()
def walk(obj, where, depth):
    if id(obj) in seen or depth > 6:
        return
    seen.add(id(obj))
    if is_js(obj):
        found.append(where)
        return
    items = []
    if isinstance(obj, dict):
        items = list(obj.items())
    elif isinstance(obj, (list, tuple, set, frozenset)):
        items = list(enumerate(obj))
    else:
        try:
            items = list(vars(obj).items())
        except TypeError:
            pass
    for attr in ("__globals__", "__defaults__", "__kwdefaults__", "__wrapped__", "__self__", "__func__"):
        try:
            items.append((attr, getattr(obj, attr)))
        except Exception:
            pass
    closure = getattr(obj, "__closure__", None)
    for i, cell in enumerate(closure if isinstance(closure, tuple) else ()):
        try:
            items.append((f"<cell {i}>", cell.cell_contents))
        except ValueError:
            pass
    for key, value in items:
        walk(value, f"{where}.{key}", depth + 1)

# Pyodide's modules are blocked (checked first: rebuilding the C core below registers it again).
imports = {}
for name in ("pyodide", "pyodide.ffi", "pyodide.code", "_pyodide", "_pyodide._importhook", "_pyodide_core", "pyodide_js", "pyodide_js._api", "js"):
    try:
        importlib.import_module(name)
        imports[name] = "imported"
    except BaseException as e:
        imports[name] = type(e).__name__

# A control: the walk finds a proxy where there is one (made by the interpreter's C core,
# rebuilt the way code in the sandbox could). It is dropped before the real search.
import _imp, importlib.machinery
core = _imp.create_builtin(importlib.machinery.ModuleSpec("_pyodide_core", importlib.machinery.BuiltinImporter, origin="built-in"))
walk({"made": core.to_js({"a": 1})}, "control", 0)
control = found[:]
found.clear()
seen.clear()
del core
gc.collect()

for name, module in list(sys.modules.items()):
    walk(module, name, 0)
walk(sys.meta_path, "sys.meta_path", 0)
walk(sys.path_hooks, "sys.path_hooks", 0)

# Everything alive, as gc hands it to any code.
alive, seen_alive, todo = [], set(), gc.get_objects()
while todo:
    obj = todo.pop()
    if id(obj) in seen_alive:
        continue
    seen_alive.add(id(obj))
    if is_js(obj):
        alive.append(repr(type(obj)))
    else:
        todo.extend(gc.get_referents(obj))

output = {"proxyTypeKnown": proxy_type_known, "control": control, "modules": len(sys.modules), "found": found, "alive": alive, "imports": imports}
`,
      [],
    );
    expect(result.executionError).toBeNull();
    const out = result.outputData as {
      proxyTypeKnown: boolean;
      control: string[];
      modules: number;
      found: string[];
      alive: string[];
      imports: Record<string, string>;
    };
    expect(out.proxyTypeKnown).toBe(true);
    expect(out.control).toEqual(['control.made']);
    expect(out.modules).toBeGreaterThan(50);
    expect(out.found).toEqual([]);
    expect(out.alive).toEqual([]);
    for (const [name, outcome] of Object.entries(out.imports)) expect(outcome, name).toBe('ModuleNotFoundError');
  });

  it('each worker is a process of its own under Node’s permission model, with no environment or directory of the server’s', async () => {
    await sandbox.ready();
    const pids = sandbox.pids();
    expect(pids.length).toBeGreaterThanOrEqual(2);
    for (const pid of pids) {
      expect(pid).not.toBe(process.pid);
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      expect(args).toContain(permissionFlags()[0]);
      // File reads: Pyodide's directory and the worker's program, nothing more; no other grant.
      expect(args.filter((a) => a.startsWith('--allow-')).sort()).toEqual([`--allow-fs-read=${PYODIDE_DIR}`, `--allow-fs-read=${WORKER_FILE}`].sort());
      // The environment: the IPC channel's own variables only.
      const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
      expect(environ.join('\n')).not.toContain(MARKER);
      for (const entry of environ) expect(entry).toMatch(/^NODE_CHANNEL_(FD|SERIALIZATION_MODE)=/);
      // The working directory is empty and the worker may not even list it.
      const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
      expect(cwd).not.toBe(process.cwd());
      expect(fs.readdirSync(cwd)).toEqual([]);
    }
  });

  it('those flags refuse reading a host file, writing, starting a process and starting a worker', () => {
    const script = `
      const fs = require('node:fs');
      const tryIt = (f) => { try { f(); return 'allowed'; } catch (e) { return e.code; } };
      console.log(JSON.stringify({
        readSecret: tryIt(() => fs.readFileSync(${py(secretFile)})),
        readPasswd: tryIt(() => fs.readFileSync('/etc/passwd')),
        write: tryIt(() => fs.writeFileSync(${py(hostWrites[0]!)}, 'x')),
        child: tryIt(() => require('node:child_process').spawnSync('true')),
        worker: tryIt(() => new (require('node:worker_threads').Worker)('1', { eval: true })),
        has: [process.permission.has('fs.read', ${py(secretFile)}), process.permission.has('fs.write', '/tmp'), process.permission.has('child'), process.permission.has('worker'), process.permission.has('fs.read', ${py(PYODIDE_DIR)})],
      }));`;
    const child = spawnSync(process.execPath, [...permissionFlags(), '--no-warnings', '-e', script], { env: {}, encoding: 'utf8' });
    expect(child.status, child.stderr).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({
      readSecret: 'ERR_ACCESS_DENIED',
      readPasswd: 'ERR_ACCESS_DENIED',
      write: 'ERR_ACCESS_DENIED',
      child: 'ERR_ACCESS_DENIED',
      worker: 'ERR_ACCESS_DENIED',
      has: [false, false, false, false, true],
    });
    expect(fs.existsSync(hostWrites[0]!)).toBe(false);
  });

  it('close kills every worker process at once, a busy one too, and none survives', async () => {
    const busy = new PythonSandbox({ poolSize: 1, concurrency: 2, timeoutMs: 120_000, memoryMb: 128 });
    busy.warm();
    await busy.ready();
    const running = busy.run('while True:\n    pass', []);
    const outcome = running.then(
      () => null,
      (error: unknown) => error,
    );
    // The refill starts loading another meanwhile: one process running, one loading.
    const until = Date.now() + 30_000;
    while ((busy.busy() === 0 || busy.pids().length < 2) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 20));
    const pids = busy.pids();
    expect(pids.length).toBe(2);
    const t0 = Date.now();
    await busy.close();
    // Far inside the run's 120 s limit: the busy worker was killed, not waited for.
    expect(Date.now() - t0).toBeLessThan(10_000);
    // The server is stopping, not the code failing: the run ends with SandboxClosedError.
    expect(await outcome).toBeInstanceOf(SandboxClosedError);
    for (const pid of pids) expect(alive(pid), String(pid)).toBe(false);
  });

  it('a worker whose server dies without closing it exits by itself, even in the middle of a loop', async () => {
    // A stand-in server: forks a worker as the sandbox does, hands it an endless loop, says its pid.
    const server = spawn(
      process.execPath,
      [
        '-e',
        `const { fork } = require('node:child_process');
         const [file, dir, flags] = JSON.parse(process.argv[1]);
         const child = fork(file, [dir, String(128 * 1048576), '1000', '600000'], { execArgv: flags, env: {}, stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
         child.on('message', (m) => {
           if (m.type === 'ready') child.send({ code: 'while True:\\n    pass', rowsJson: '[]' }, () => setTimeout(() => console.log(child.pid), 500));
         });`,
        JSON.stringify([WORKER_FILE, PYODIDE_DIR, [...permissionFlags(), '--no-warnings']]),
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pid = await new Promise<number>((resolve, reject) => {
      server.stdout.setEncoding('utf8');
      server.stdout.once('data', (line: string) => resolve(Number(line.trim())));
      server.once('exit', () => reject(new Error('the stand-in server ended first')));
    });
    expect(alive(pid)).toBe(true);
    server.kill('SIGKILL');
    const until = Date.now() + 10_000;
    while (alive(pid) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(alive(pid)).toBe(false);
  });
});

/** Whether a process with this id exists (and is not a zombie waiting for its parent). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}
