/**
 * The Python half of the worker's Python runner, defined once per interpreter as the module
 * `_ptc`: lossless JSON text in both directions, the tool namespaces as Python objects, the four
 * program formats, and failures rendered with the program's own `program:line:col` positions.
 * Values cross to JavaScript only as JSON text (never as FFI proxies), so the refusals are the
 * same as JavaScript's, and nothing Python holds aliases a JavaScript object.
 * Images, `inspect` and `fetch` are in python-prelude-io.ts, run in the same module after this.
 */
/**
 * How deep a value crossing between Python and the host may nest. Pyodide's C code recurses on
 * nesting (reading JSON, freeing a list) on the worker's stack, which overflows and leaves
 * Pyodide unusable: at about 25 000 levels on Node 20, and at 6 000 in a thread-tier worker on
 * Node 24 and 26; the bound keeps half of the smaller free.
 */
export const PYTHON_MAX_DEPTH = 3_000
/** What follows the path of a value nested past {@link PYTHON_MAX_DEPTH}. */
export const PAST_PYTHON_DEPTH = `is nested past ${PYTHON_MAX_DEPTH} levels, the most a value crossing between Python and the host may nest`

export const PYTHON_PRELUDE = String.raw`
import ast, builtins, json, math, sys, traceback

MAX_EXACT_INTEGER = 2 ** 53
MAX_DEPTH = ${PYTHON_MAX_DEPTH}
PAST_DEPTH = ${JSON.stringify(PAST_PYTHON_DEPTH)}
# Deep paths keep this many segments at each end around an ellipsis, as the host's do.
KEPT_SEGMENTS = 8
PROGRAM_FILES = ('program', 'initializer')
_NOTHING = object()


class NotLossless(TypeError):
    pass


class TooDeep(ValueError):
    pass


def _render_path(path):
    parts = []
    while path is not None:
        path, key = path
        parts.append(key)
    parts.reverse()
    if len(parts) > 2 * KEPT_SEGMENTS:
        parts[KEPT_SEGMENTS:-KEPT_SEGMENTS] = [_NOTHING]
    text = '$'
    for key in parts:
        if key is _NOTHING:
            text += '…'
        elif type(key) is int:
            text += '[' + str(key) + ']'
        elif key.isidentifier():
            text += '.' + key
        else:
            text += '[' + json.dumps(key) + ']'
    return text


def dumps(value):
    """JSON text of value, or NotLossless (TooDeep past MAX_DEPTH) naming the first offending path. Iterative."""
    out = []
    on_path = set()
    stack = []
    pending = (value, None)
    while True:
        if pending is not None:
            item, path = pending
            pending = None
            kind = type(item)
            if item is None:
                out.append('null')
            elif item is True:
                out.append('true')
            elif item is False:
                out.append('false')
            elif kind is int:
                if -MAX_EXACT_INTEGER <= item <= MAX_EXACT_INTEGER:
                    out.append(str(item))
                else:
                    raise NotLossless(_render_path(path) + ' is an integer beyond 2**53, which a JSON number cannot carry exactly (send it as a string)')
            elif kind is float:
                if item != item or item in (math.inf, -math.inf):
                    raise NotLossless(_render_path(path) + ' is ' + repr(item) + ', which is not JSON')
                if item == 0 and math.copysign(1.0, item) < 0:
                    raise NotLossless(_render_path(path) + ' is -0.0, which JSON cannot carry')
                out.append(repr(item))
            elif kind is str:
                out.append(json.dumps(item))
            elif kind is dict or kind is list or kind is tuple:
                if len(stack) == MAX_DEPTH:
                    raise TooDeep(_render_path(path) + ' ' + PAST_DEPTH)
                if id(item) in on_path:
                    raise NotLossless(_render_path(path) + ' contains itself (a cycle)')
                on_path.add(id(item))
                is_dict = kind is dict
                out.append('{' if is_dict else '[')
                stack.append([item, iter(item.items()) if is_dict else enumerate(item), is_dict, path, True])
            else:
                raise NotLossless(_render_path(path) + ' is a ' + kind.__name__ + ', which is not JSON (use dict, list, str, int, float, bool or None)')
        if not stack:
            return ''.join(out)
        frame = stack[-1]
        try:
            key, item = next(frame[1])
        except StopIteration:
            out.append('}' if frame[2] else ']')
            on_path.discard(id(frame[0]))
            stack.pop()
            continue
        if not frame[4]:
            out.append(',')
        frame[4] = False
        if frame[2]:
            if type(key) is not str:
                raise NotLossless(_render_path(frame[3]) + ' has the key ' + repr(key) + ', and JSON keys are strings')
            out.append(json.dumps(key))
            out.append(':')
        pending = (item, (frame[3], key))


class Namespace:
    """A tool namespace: read-only; tool['name'] reaches a member whose name is no identifier."""

    def __init__(self, name, members):
        object.__setattr__(self, '_ptc_name', name)
        object.__setattr__(self, '_ptc_members', members)

    def __getattr__(self, member):
        members = object.__getattribute__(self, '_ptc_members')
        if member in members:
            return members[member]
        name = object.__getattribute__(self, '_ptc_name')
        known = ', '.join(sorted(members)) or 'none'
        raise AttributeError(name + ' has no tool ' + repr(member) + '; its tools: ' + known)

    def __getitem__(self, member):
        return self.__getattr__(member)

    def __setattr__(self, member, value):
        raise AttributeError('the tool namespace ' + object.__getattribute__(self, '_ptc_name') + ' is read-only; keep helpers in your own functions or variables')

    __delattr__ = __setattr__

    def __dir__(self):
        return sorted(object.__getattribute__(self, '_ptc_members'))

    def __repr__(self):
        return '<tools ' + object.__getattribute__(self, '_ptc_name') + ': ' + ', '.join(self.__dir__()) + '>'


def _member(label, member, positional, call, error_class, member_property):
    async def invoke(*args, **kwargs):
        if positional:
            if len(args) > 2 or (len(args) == 2 and kwargs):
                raise TypeError(label + ' takes a first argument and options (keywords or one dict)')
            payload = list(args)
            if kwargs:
                payload.append(kwargs)
            if not payload:
                payload = _NOTHING
        else:
            if len(args) > 1 or (args and kwargs):
                raise TypeError(label + ' takes keyword arguments or one dict, not ' + str(len(args)) + ' positional argument(s)' + (' and keywords' if kwargs else ''))
            payload = args[0] if args else (kwargs if kwargs else _NOTHING)
        try:
            text = None if payload is _NOTHING else dumps(payload)
        except NotLossless as refusal:
            raise TypeError(label + ': arguments must be lossless JSON (' + str(refusal) + ')') from None
        except TooDeep as refusal:
            raise ValueError(label + ': arguments nest too deep (' + str(refusal) + ')') from None
        answer = await call(text, positional)
        tag, body = answer[0], answer[1:]
        if tag == 'v':
            return loads(body)
        if tag == 'u':
            return None
        if tag == 'd':
            raise ValueError(body)
        if error_class is None:
            raise RuntimeError(body)
        error = error_class(body)
        if member_property:
            setattr(error, member_property, member)
        raise error
    invoke.__name__ = member if member.isidentifier() else 'tool'
    invoke.__qualname__ = label
    return invoke


_state = {'globals': None}


def fresh_globals():
    return {'__name__': '__main__', '__builtins__': builtins}


def run_globals(format):
    """The module namespace of a run: one per worker, kept across runs; scoped-repl runs get a copy."""
    current = _state['globals']
    if current is None:
        current = fresh_globals()
    elif format == 'scoped-repl':
        current = dict(current)
    _state['globals'] = current
    return current


def install(namespace_globals, shapes_json, call, show, image_key, fetch_bridge):
    """Defines the run's tool namespaces and error classes as globals of the run (the last run's go), and inspect and Image where the program left those names free."""
    for name, value in _state.get('installed', ()):
        if namespace_globals.get(name) is value:
            del namespace_globals[name]
    installed = _state['installed'] = []
    _state['show'] = show
    _state['image_key'] = image_key
    _state['fetch'] = fetch_bridge
    if fetch_bridge is not None:
        if namespace_globals.get('fetch', fetch) is fetch:
            namespace_globals['fetch'] = fetch
    elif namespace_globals.get('fetch') is fetch:
        del namespace_globals['fetch']
    for name, value in (('inspect', inspect), ('Image', Image)):
        if namespace_globals.get(name, value) is value:
            namespace_globals[name] = value
    for shape in json.loads(shapes_json):
        error = shape.get('errorClass')
        error_class = type(error['name'], (Exception,), {'__module__': 'builtins'}) if error else None
        members = {}
        for member in shape['members']:
            label = shape['global'] + '.' + member
            members[member] = _member(label, member, bool(shape.get('positional')), _bind(call, shape['global'], member), error_class, error and error['memberNameProperty'])
        namespace_globals[shape['global']] = Namespace(shape['global'], members)
        installed.append((shape['global'], namespace_globals[shape['global']]))
        if error_class is not None:
            namespace_globals[error['name']] = error_class
            installed.append((error['name'], error_class))


def _bind(call, global_name, member):
    def send(text, positional):
        return call(global_name, member, text, positional)
    return send


async def run(source, filename, format):
    """Runs one program; returns its value's JSON text, or None for no value."""
    namespace = run_globals(format)
    tree = ast.parse(source, filename)
    if format == 'function-body':
        body = tree.body or [ast.Pass(lineno=1, col_offset=0, end_lineno=1, end_col_offset=0)]
        function = ast.AsyncFunctionDef(
            name='__ptc_program__', args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=body, decorator_list=[], returns=None, type_comment=None, type_params=[],
            lineno=1, col_offset=0, end_lineno=body[-1].end_lineno, end_col_offset=body[-1].end_col_offset)
        code = compile(ast.Module(body=[function], type_ignores=[]), filename, 'exec', dont_inherit=True)
        exec(code, namespace)
        value = await namespace.pop('__ptc_program__')()
    else:
        last = tree.body[-1] if tree.body else None
        if isinstance(last, ast.Expr):
            target = ast.Name(id='__ptc_value__', ctx=ast.Store())
            tree.body[-1] = ast.copy_location(ast.Assign(targets=[ast.copy_location(target, last)], value=last.value), last)
        namespace.pop('__ptc_value__', None)
        code = compile(tree, filename, 'exec', flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
        pending = eval(code, namespace)
        if pending is not None:
            await pending
        value = namespace.pop('__ptc_value__', None)
    if value is None:
        return None
    try:
        return dumps(value)
    except NotLossless as refusal:
        raise ValueError('the completion value is not lossless JSON: ' + str(refusal)) from None
    except TooDeep as refusal:
        raise ValueError('the completion value nests too deep (' + str(refusal) + ')') from None


_sources = {}


async def execute(source, filename, format):
    """Runs one program: 'v' and its value's JSON text, 'u' for no value, or 'e' and the failure text."""
    _sources[filename] = source.splitlines()
    try:
        text = await run(source, filename, format)
        return 'u' if text is None else 'v' + text
    except BaseException as error:
        return 'e' + describe(error, _sources)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass


def _column(line_text, byte_offset):
    if byte_offset is None or line_text is None:
        return 1
    return len(line_text.encode('utf-8')[:byte_offset].decode('utf-8', 'replace')) + 1


def describe(error, source_lines):
    """The failure text the model reads: the error, then the program's frames, innermost first."""
    if isinstance(error, SyntaxError) and error.filename in PROGRAM_FILES:
        line = error.lineno or 1
        column = error.offset or 1
        text = (error.text or '').rstrip('\n')
        caret = ''.join('\t' if c == '\t' else ' ' for c in text[:column - 1]) + '^'
        return 'SyntaxError: ' + str(error.msg) + ' (line ' + str(line) + ', column ' + str(column) + ')\n' + text + '\n' + caret
    header = ''.join(traceback.format_exception_only(type(error), error)).strip()
    lines = [header]
    frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename in PROGRAM_FILES]
    for frame in reversed(frames):
        lines_of = source_lines.get(frame.filename, [])
        text = lines_of[frame.lineno - 1] if frame.lineno and 0 < frame.lineno <= len(lines_of) else None
        where = frame.filename + ':' + str(frame.lineno) + ':' + str(_column(text, frame.colno))
        name = frame.name
        if name == '__ptc_program__' or name == '<module>':
            lines.append('    at ' + where)
        else:
            lines.append('    at ' + name + ' (' + where + ')')
    return '\n'.join(lines)
`
