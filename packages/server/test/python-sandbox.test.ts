import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PythonSandbox, SandboxBusyError } from '../src/python/sandbox.js';

// The sandbox alone (no store involved): what the code can and cannot reach, and the limits.
// Each run loads a worker (seconds on a busy machine): generous time per test.
describe('the Python sandbox', { timeout: 180_000 }, () => {
  let sandbox: PythonSandbox;
  let server: http.Server;
  let hits = 0;
  let port = 0;
  beforeAll(async () => {
    sandbox = new PythonSandbox({ poolSize: 2, concurrency: 2, timeoutMs: 3_000, memoryMb: 128 });
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
    const result = await sandbox.run('while True:\n    pass', []);
    expect(result.executionError).toBe('The analysis ran longer than 3 s and was stopped.');
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
      ...Object.entries(probes).map(([name, probe]) => `try:\n    exec(${JSON.stringify(probe)}, {})\n    outcomes[${JSON.stringify(name)}] = "reached"\nexcept BaseException as e:\n    outcomes[${JSON.stringify(name)}] = type(e).__name__`),
      'output = outcomes',
    ].join('\n');
    const result = await sandbox.run(code, []);
    expect(result.executionError).toBeNull();
    const outcomes = result.outputData as Record<string, string>;
    expect(Object.keys(outcomes).sort()).toEqual(Object.keys(probes).sort());
    for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).not.toBe('reached');
    expect(outcomes).toMatchObject({ importJs: 'ModuleNotFoundError', importPyodideJs: 'ModuleNotFoundError', passwd: 'FileNotFoundError', etc: 'FileNotFoundError', socket: 'PermissionError' });
    // C's way to JavaScript ends the run (the interpreter cannot go on after it), reaching nothing.
    const script = await sandbox.run(`import ctypes\nctypes.CDLL(None).emscripten_run_script(b"fetch('http://127.0.0.1:${port}/')")`, []);
    expect(script.executionError).toMatch(/^The Python sandbox stopped unexpectedly/);
    expect(hits).toBe(0);
  });

  it('two runs never see each other’s state: globals, modules, builtins and files are gone with the worker', async () => {
    const first = await sandbox.run('import builtins, sys, json\nsecret = 42\nbuiltins.leaked = "yes"\njson.leaked = "yes"\nsys.path.append("/tmp/mine")\nopen("/tmp/note.txt", "w").write("private")\noutput = "written"', []);
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
});
