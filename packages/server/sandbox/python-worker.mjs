// One Python run in a worker thread (src/python/sandbox.ts starts it, hands it one run, then
// terminates it: a worker never serves two runs). Plain JavaScript so that the same file runs
// under the compiled server and under the test runner.
//
// Order matters: Pyodide loads first (it needs Node's modules and eval while it starts), then
// everything that reaches outside the worker is taken away, then the worker says it is ready.
// The user's code may still reach JavaScript (Python in one interpreter cannot be fenced off
// from the interpreter's own bridge), so the JavaScript side is what must hold nothing: no
// network, no host filesystem, no way to compile new JavaScript.
/* global WebAssembly, URL, TextDecoder, setTimeout */
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

const { indexURL, memoryLimitBytes, outputLimitBytes } = workerData;
const port = parentPort;
const send = (message) => port.postMessage(message);

// WebAssembly memory only grows through this call (Emscripten's heap resize): past the limit
// the grow is refused, so Python sees a MemoryError, and the parent is told, which terminates
// the worker whatever the code does next.
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  const after = this.buffer.byteLength + pages * 65_536;
  if (after > memoryLimitBytes) {
    send({ type: 'memory', bytes: after });
    throw new RangeError('memory limit');
  }
  return grow.call(this, pages);
};

const { loadPyodide } = await import(new URL('pyodide.mjs', pathToFileURL(indexURL)).href);
const pyodide = await loadPyodide({ indexURL, packages: [], env: { HOME: '/home/pyodide' } });

/** Text written to stdout or stderr, kept up to the output limit. */
function collector() {
  const decoder = new TextDecoder();
  let text = '';
  let truncated = false;
  return {
    write(bytes) {
      if (!truncated) {
        text += decoder.decode(bytes, { stream: true });
        if (text.length > outputLimitBytes) {
          text = text.slice(0, outputLimitBytes);
          truncated = true;
        }
      }
      return bytes.length;
    },
    text: () => (truncated ? `${text}\n[output truncated at ${outputLimitBytes} characters]` : text),
    clear() {
      text = '';
      truncated = false;
    },
  };
}
const stdout = collector();
const stderr = collector();
pyodide.setStdout({ write: (bytes) => stdout.write(bytes) });
pyodide.setStderr({ write: (bytes) => stderr.write(bytes) });
pyodide.setStdin({ error: true });

// The runner, defined while the bridges still exist: it takes the rows as JSON text, runs the
// code in a namespace of its own and answers JSON text (never a JavaScript object).
const run = pyodide.runPython(`
def _make_runner(limit):
    import json, sys, traceback
    from pyodide.code import eval_code

    def run(code, rows_json):
        namespace = {"__name__": "__main__", "rows": json.loads(rows_json)}
        error = None
        value = None
        try:
            value = eval_code(code, namespace, filename="<analysis>")
            if "output" in namespace:
                value = namespace["output"]
        except BaseException as e:
            lines = traceback.format_exception(e)
            # Keep the user's frames only, not the runner's.
            kept = [lines[0]] + [l for l in lines[1:] if '"<analysis>"' in l or not l.startswith("  File ")]
            error = "".join(kept).rstrip()
        sys.stdout.flush()
        sys.stderr.flush()
        output = None
        if error is None and value is not None:
            try:
                output = json.dumps(value, default=str, allow_nan=False)
            except (TypeError, ValueError) as e:
                error = f"The output is not JSON: {e}"
        if output is not None and len(output) > limit:
            output = None
            error = f"The output is larger than {limit} characters as JSON."
        return json.dumps({"error": error, "output": output})
    return run

_make_runner(${Number(outputLimitBytes)})
`);

// WebAssembly functions are compiled on their first call: one run through the runner's paths
// (compiling, running, a traceback, JSON) here, not in the user's time. Its namespace is dropped.
run('output = [len(rows)]', '[{"a": 1}]');
run('print("x")\n1 / 0', '[]');
stdout.clear();
stderr.clear();

// Python side: the modules that lead to JavaScript or the network go.
pyodide.runPython(`
import sys
for _name in ("js", "pyodide_js", "pyodide.http", "pyodide.ffi.wrappers", "pyodide.webloop", "micropip", "pyodide_http"):
    sys.modules[_name] = None
del _name
`);
pyodide.unregisterJsModule('js');
pyodide.unregisterJsModule('pyodide_js');

// JavaScript side: no sockets (Emscripten would open WebSockets with the 'ws' package), no host
// filesystem mounts, no package loading, no code compiled from strings, and none of the worker's
// ways out.
const { FS, SOCKFS } = pyodide._module;
const refused = () => {
  throw new FS.ErrnoError(pyodide.ERRNO_CODES.EACCES);
};
SOCKFS.createSocket = refused;
for (const name of Object.keys(FS.filesystems)) if (name !== 'MEMFS') delete FS.filesystems[name];
FS.mount = refused;
pyodide.mountNodeFS = refused;
pyodide.mountNativeFS = refused;
pyodide.loadPackage = refused;
pyodide.loadPackagesFromImports = refused;
const noCode = function () {
  throw new EvalError('Code generation is disabled in the Python sandbox.');
};
for (const fn of [function () {}, async function () {}, function* () {}, async function* () {}]) {
  Object.defineProperty(Object.getPrototypeOf(fn), 'constructor', { value: noCode, writable: false, configurable: false });
}
for (const name of ['eval', 'Function', 'fetch', 'process', 'require', 'module', 'Request', 'Response', 'Headers', 'WebSocket', 'EventSource', 'XMLHttpRequest', 'BroadcastChannel', 'MessageChannel', 'Worker', 'SharedArrayBuffer', 'Buffer', 'navigator', 'importScripts']) {
  try {
    Object.defineProperty(globalThis, name, { value: undefined, writable: false, configurable: false });
  } catch {
    delete globalThis[name];
  }
}

port.once('message', ({ code, rowsJson }) => {
  const answer = JSON.parse(run(code, rowsJson));
  send({ type: 'done', stdout: stdout.text(), stderr: stderr.text(), executionError: answer.error, outputJson: answer.output });
});
// Ready from the next turn of the event loop: what the load left to do (about 300 ms on a busy
// machine) is done by then, rather than in the first run's time.
setTimeout(() => send({ type: 'ready' }), 0);
