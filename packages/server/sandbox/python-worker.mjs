// One Python run in a process of its own (src/python/sandbox.ts forks it, hands it one run over
// the IPC channel, then kills it: a process never serves two runs). Plain JavaScript so that the
// same file runs under the compiled server and under the test runner.
//
// The process is the outer wall: it is started under Node's permission model (it may read only
// Pyodide's files and this one; no file writes, no child processes, no workers), with an empty
// environment and an empty working directory, so even JavaScript that the code reached would find
// nothing of the server. Inside it, in this order: Pyodide loads (it needs Node's modules while it
// starts), then every road from Python to JavaScript is taken away, the runner checks that no
// Python object left reaches a JavaScript one, and only then the process says it is ready.
/* global process, WebAssembly, URL, TextDecoder, setTimeout */
import { pathToFileURL } from 'node:url';

// Kept before the global `process` goes: the IPC channel and the exit are all this needs of it.
const proc = process;
const [indexURL, memoryLimit, outputLimit, timeout] = proc.argv.slice(2);
const memoryLimitBytes = Number(memoryLimit);
const outputLimitBytes = Number(outputLimit);
const timeoutMs = Number(timeout);
const parentPid = proc.ppid;
const send = (message) => proc.send(message);
// The server gone (its channel closed), nothing is left to answer: this process goes too.
proc.on('disconnect', () => proc.exit(0));

// WebAssembly memory only grows through this call (Emscripten's heap resize): past the limit
// the grow is refused, so Python sees a MemoryError, and the parent is told, which kills the
// process whatever the code does next.
const grow = WebAssembly.Memory.prototype.grow;
WebAssembly.Memory.prototype.grow = function (pages) {
  const after = this.buffer.byteLength + pages * 65_536;
  if (after > memoryLimitBytes) {
    send({ type: 'memory', bytes: after });
    throw new RangeError('memory limit');
  }
  return grow.call(this, pages);
};

// Emscripten's host file-system driver (NODEFS) reads Node's open flags through process.binding,
// which the permission model refuses. It is answered with no flags at all: the driver is removed
// after the load anyway, and this way it could not open a host file even if it were reached.
proc.binding = (name) => {
  if (name === 'constants') return { fs: {} };
  throw new Error(`process.binding('${name}') is not available in the Python sandbox.`);
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

// The parent kills this process at the time limit. Two things it cannot cover are covered here,
// from inside the interpreter's own loop (Python asks this object about interrupts every few
// thousand bytecodes, even in a loop that never yields to Node): a server that died without
// killing this process (the process is then re-parented), and, as a second guard, a run past its
// time limit by a margin.
let deadline = Infinity;
let checks = 0;
pyodide.setInterruptBuffer({
  get 0() {
    checks = (checks + 1) % 64;
    if (checks === 0 && (proc.ppid !== parentPid || Date.now() > deadline)) proc.exit(1);
    return 0;
  },
  set 0(_value) {},
});

// The runner, in a namespace of its own that holds nothing of Pyodide's: it takes the rows as JSON
// text, runs the code with plain compile/exec (the last expression is the value, as in a
// notebook) and answers JSON text (never a JavaScript object).
const runner = pyodide.runPython(
  `
def _make_runner(limit):
    import ast, json, sys, traceback

    def run(code, rows_json):
        namespace = {"__name__": "__main__", "__builtins__": __builtins__, "rows": json.loads(rows_json)}
        error = None
        value = None
        try:
            tree = ast.parse(code, filename="<analysis>", mode="exec")
            last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
            exec(compile(tree, "<analysis>", "exec"), namespace)
            if last is not None:
                value = eval(compile(ast.Expression(last.value), "<analysis>", "eval"), namespace)
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
`,
  { globals: pyodide.runPython('{"__builtins__": __builtins__}') },
);
const run = (code, rowsJson) => runner(code, rowsJson);

// WebAssembly functions are compiled on their first call: one run through the runner's paths
// (compiling, running, a traceback, JSON) here, not in the user's time. Its namespace is dropped.
run('output = [len(rows)]', '[{"a": 1}]');
run('print("x")\n1 / 0', '[]');
stdout.clear();
stderr.clear();

// Python side. Pyodide's own modules are the bridge to JavaScript ('js' is the global scope,
// 'pyodide_js._api' the runtime with its file systems, 'pyodide.ffi' makes JavaScript objects),
// so all of them are blocked in sys.modules, as is C's way out (ctypes) and CPython's test
// modules (raw memory access); the import hook that finds JavaScript modules goes, and what
// Pyodide patched into the standard library (time.sleep, asyncio's loop, each holding a
// JavaScript function) is put back. Then every object the interpreter still holds is searched for
// a JavaScript proxy and whatever holds one lets go of it; one still found after that means this
// Pyodide keeps a bridge this file does not know of, and the process refuses to serve with it.
pyodide.unregisterJsModule('js');
pyodide.unregisterJsModule('pyodide_js');
const leftover = pyodide.runPython(`
def _seal():
    import asyncio, asyncio.events, gc, sys, time
    webloop = sys.modules.get("pyodide.webloop")
    if webloop is not None:
        time.sleep = webloop._orig_sleep
        asyncio.run = webloop._orig_run
    asyncio.events._event_loop_policy = None
    asyncio.events._set_running_loop(None)
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("_pyodide")]
    blocked = {"js", "micropip", "pyodide_http", "ctypes", "_ctypes", "_testcapi", "_testinternalcapi", "_testlimitedcapi",
               "_testbuffer", "_testclinic", "_testclinic_limited", "_xxtestfuzz", "_remote_debugging", "_posixsubprocess"}
    bridges = ("pyodide", "_pyodide", "pyodide_js")
    for name in list(sys.modules) + list(blocked) + list(bridges) + ["_pyodide_core", "pyodide_js._api"]:
        if name in blocked or name == "_pyodide_core" or name.split(".")[0] in bridges:
            sys.modules[name] = None
    for module in list(sys.modules.values()):
        for attr in ("pyodide", "_pyodide", "pyodide_js", "_pyodide_core", "js"):
            if module is not None and attr in getattr(module, "__dict__", {}):
                delattr(module, attr)
    gc.collect()

    def is_js(obj):
        return any(c.__name__ == "JsProxy" for c in type(obj).__mro__)

    def alive_js():
        # Everything alive, not only what sys.modules leads to: gc.get_objects() and
        # object.__subclasses__() hand the code any object the interpreter holds.
        seen = set()
        todo = list(gc.get_objects()) + [sys.modules]
        found = []
        while todo:
            obj = todo.pop()
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            if is_js(obj):
                found.append(obj)
            else:
                todo.extend(gc.get_referents(obj))
        return found

    # Whatever still holds one (a module's globals, a loader's attribute) lets go of it.
    for proxy in alive_js():
        for holder in gc.get_referrers(proxy):
            if isinstance(holder, dict):
                for key in [k for k, v in holder.items() if v is proxy]:
                    holder[key] = None
            elif isinstance(holder, list):
                holder[:] = [None if v is proxy else v for v in holder]
            elif hasattr(holder, "__dict__"):
                for key in [k for k, v in vars(holder).items() if v is proxy]:
                    setattr(holder, key, None)
        del holder
    del proxy
    gc.collect()
    return ", ".join(repr(type(p)) for p in alive_js())

_seal()
`);
pyodide.runPython('del _seal; import gc; gc.collect()');
if (leftover) throw new Error(`A JavaScript proxy is still reachable from Python: ${leftover}`);

// JavaScript side: no sockets (Emscripten would open WebSockets with the 'ws' package), no host
// file-system driver, no package loading, no code compiled from strings, and none of Node's ways
// out in the global scope.
const mod = pyodide._module;
const { FS, SOCKFS } = mod;
const refused = () => {
  throw new FS.ErrnoError(pyodide.ERRNO_CODES.EACCES);
};
SOCKFS.createSocket = refused;
for (const name of Object.keys(FS.filesystems)) if (name !== 'MEMFS') delete FS.filesystems[name];
for (const name of ['NODEFS', 'NODERAWFS', 'IDBFS', 'WORKERFS', 'PROXYFS', 'NODESOCKFS']) delete mod[name];
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

proc.once('message', ({ code, rowsJson }) => {
  deadline = Date.now() + timeoutMs + 1_000;
  const answer = JSON.parse(run(code, rowsJson));
  send({ type: 'done', stdout: stdout.text(), stderr: stderr.text(), executionError: answer.error, outputJson: answer.output });
});
// Ready from the next turn of the event loop: what the load left to do (about 300 ms on a busy
// machine) is done by then, rather than in the first run's time.
setTimeout(() => send({ type: 'ready' }), 0);
