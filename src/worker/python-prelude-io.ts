/**
 * The rest of the `_ptc` module (python-prelude.ts): images a tool returned (`Image`, shown by
 * `inspect`) and `fetch` under brokered egress, with its `Response`. Runs after the prelude, in
 * the same module, and uses its `dumps`, `NotLossless` and `_state`.
 */
export const PYTHON_PRELUDE_IO = String.raw`
import base64, pprint


class Image:
    """An image a tool returned; inspect(image) shows it to the model."""

    __slots__ = ('_ptc_handle', 'path', 'width', 'height', 'media_type', 'name')

    def __init__(self, handle, fields):
        for slot, key in (('path', 'path'), ('width', 'width'), ('height', 'height'), ('media_type', 'mediaType'), ('name', 'name')):
            object.__setattr__(self, slot, fields.get(key))
        object.__setattr__(self, '_ptc_handle', handle)

    def __setattr__(self, name, value):
        raise AttributeError('an Image is read-only')

    def __repr__(self):
        kind = (self.media_type or '').replace('image/', '')
        return 'Image(' + kind + ' ' + str(self.width) + 'x' + str(self.height) + (' ' + repr(self.name) if self.name else '') + ', path=' + repr(self.path) + ')'


def _value_hook(fields):
    handle = fields.get(_state['image_key'])
    if type(handle) is int and len(fields) <= 6:
        return Image(handle, fields)
    return fields


def loads(text):
    """A tool's result: JSON, with the images it holds as Image objects."""
    return json.loads(text, object_hook=_value_hook)


def inspect(value):
    """Shows an Image to the model; prints a readable rendering of any other value."""
    if type(value) is Image:
        _state['show'](value._ptc_handle)
    else:
        print(pprint.pformat(value, sort_dicts=False))


class Response:
    """What fetch resolves: status, ok, status_text, url, headers (names in lower case), content (bytes), text, json()."""

    __slots__ = ('status', 'status_text', 'url', 'headers', 'content')

    def __init__(self, answer):
        object.__setattr__(self, 'status', answer['status'])
        object.__setattr__(self, 'status_text', answer['statusText'])
        object.__setattr__(self, 'url', answer['url'])
        object.__setattr__(self, 'headers', {name: value for name, value in answer['headers']})
        object.__setattr__(self, 'content', base64.b64decode(answer['body']))

    def __setattr__(self, name, value):
        raise AttributeError('a Response is read-only')

    @property
    def ok(self):
        return 200 <= self.status <= 299

    @property
    def text(self):
        return self.content.decode('utf-8', 'replace')

    def json(self):
        return json.loads(self.text)

    def __repr__(self):
        return '<Response ' + str(self.status) + ' ' + self.url + '>'


async def fetch(url, *, method='GET', headers=None, body=None, json=None):
    """Fetches url through the host's broker (the hosts the network policy allows); raises ConnectionError when it cannot."""
    send = _state.get('fetch')
    if send is None:
        raise ConnectionError('fetch: this runtime grants no network')
    if type(url) is not str or type(method) is not str:
        raise TypeError('fetch: url and method must be str')
    fields = dict(headers or {})
    payload, encoded = None, False
    if json is not None:
        if body is not None:
            raise TypeError('fetch takes body or json, not both')
        payload = dumps(json)
        if not any(name.lower() == 'content-type' for name in fields):
            fields['content-type'] = 'application/json'
    elif isinstance(body, (bytes, bytearray)):
        payload, encoded = base64.b64encode(bytes(body)).decode('ascii'), True
    elif body is not None:
        if type(body) is not str:
            raise TypeError('fetch: body must be str or bytes (or pass json=)')
        payload = body
    try:
        request = dumps({'url': url, 'method': method, 'headers': fields, 'body': payload, 'base64': encoded})
    except NotLossless as refusal:
        raise TypeError('fetch: ' + str(refusal)) from None
    answer = await send(request)
    if answer[0] == 'e':
        raise ConnectionError(answer[1:])
    return Response(_json_loads(answer[1:]))


_json_loads = json.loads
`
