"""cudavision.frames: a pipeline's frames as an iterator (docs/python.md, "Reading frames")."""

import ctypes
import functools
import os
import re
import threading

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstApp", "1.0")
from gi.repository import GLib, Gst, GstApp  # noqa: E402, F401 (GstApp: the appsink's methods)

# the package's own, defined before it imports this module (cudavision/__init__.py, at its end)
from . import _LAYOUTS, Frame, Unsupported, frame  # noqa: E402
from ._results import results  # noqa: E402

# how long one pull waits before the bus is looked at again (nanoseconds)
_POLL_NS = 50 * Gst.MSECOND
_ERROR = Gst.MessageType.ERROR

# Whether the bus holds a message, asked of libgstreamer (ctypes) at every pull: a look without
# PyGObject, which costs a third of a microsecond a call and a flags' OR a microsecond more; the
# bus is popped only where something is there (docs/python.md, "Reading frames").
_libgst = ctypes.CDLL("libgstreamer-1.0.so.0")
_have_pending = _libgst.gst_bus_have_pending
_have_pending.argtypes, _have_pending.restype = [ctypes.c_void_p], ctypes.c_int

# an appsink in a description: the element's name as a word, not a part of another (name=notappsink)
_APPSINK = re.compile(r"(?:^|[\s!])appsink(?=$|[\s!])")

# The appsink the reader adds takes the formats the module reads, in CUDA memory (first, as our
# elements list theirs) and in system memory, so that negotiation picks one it can read rather than
# what upstream likes best (videotestsrc's ABGR64_LE); an appsink of the user's own is left as it is.
_FORMATS = ", ".join(_LAYOUTS)
_ADDED = f' ! appsink caps="video/x-raw(memory:CUDAMemory),format={{{_FORMATS}}}; video/x-raw,format={{{_FORMATS}}}"'
_NOT_READABLE = (f" (the appsink the reader adds takes video frames in the formats cudavision reads, {_FORMATS}: "
                 "convert the video to one in the description (videoconvert), or with frames (..., rgb=True))")


def _to_null(element, _data=None):
    """Gst.Element.call_async's function: @element to NULL, on a thread of GStreamer's pool."""
    element.set_state(Gst.State.NULL)


def _stop(pipeline):
    """Sets @pipeline to NULL: at once, or, from a thread that Python's threading did not start (a
    GStreamer streaming thread: a pad probe, or the cyclic GC run inside one, dropping or closing a
    reader), through Gst.Element.call_async, GStreamer's own way to change a state from a
    streaming thread: there the state change would join the thread's own task, and GStreamer
    aborts. The pipeline then stops shortly after (docs/python.md, "Reading frames")."""
    if isinstance(threading.current_thread(), threading._DummyThread):
        pipeline.call_async(_to_null, None)
    else:
        pipeline.set_state(Gst.State.NULL)


def _adds_pads(element):
    """Whether @element may add a source pad as it plays (a sometimes pad: decodebin's, a
    demuxer's), which a description (gst-launch's delayed link) or its application links then: an
    appsink not linked yet may be linked to it."""
    return any(template.direction == Gst.PadDirection.SRC and template.presence == Gst.PadPresence.SOMETIMES
               for template in element.get_pad_template_list())


class _ReaderFrame(Frame):
    """A Frame of the reader: its `results` and `buffer` made at their first read, from the sample
    it keeps, rather than at every pull (a loop that reads neither, as one that hands each frame to
    PyTorch, makes neither); the values are the same whenever they are read, a pulled buffer's
    metas being fixed."""

    @functools.cached_property
    def results(self):
        return results(self._reader_sample)

    @functools.cached_property
    def buffer(self):
        return self._reader_sample.get_buffer()


class PipelineError(RuntimeError):
    """The pipeline's own error (an ERROR message on its bus): `element` names the element that
    posted it, `debug` is GStreamer's debug text, and the message is GStreamer's."""

    def __init__(self, message, element=None, debug=None):
        super().__init__(message if element is None else f"{element}: {message}")
        self.element, self.debug = element, debug


def _description(source, rgb):
    """(a gst-launch description for @source, whether an appsink is to be added at its end): a
    pipeline's text as it is, or a URI (anything with "://" and no "!", or the path of a file that
    exists, whatever its characters) decoded by uridecodebin; an appsink to add where the text
    ends in none."""
    text = source.strip()
    uri = None
    if os.path.isfile(text):
        # a file's path first: a "!" in its name is the name's, not a link (its URI keeps it)
        uri = Gst.filename_to_uri(os.path.abspath(text))
    elif "://" in text and "!" not in text:
        uri = text
    if uri is not None:
        # its video only: streams the caps do not take are not exposed
        text = f'uridecodebin uri="{uri}" expose-all-streams=false caps="video/x-raw(ANY)"'
        if not rgb:
            text += " ! videoconvert"
    elif rgb and _APPSINK.search(text):
        # the conversion would follow it ("could not link appsink0 to videoconvert0")
        raise TypeError("rgb=True converts to RGBA before the appsink the reader adds, and the description has "
                        "an appsink of its own: leave it out (the reader adds one), or convert in the description "
                        "(... ! videoconvert ! video/x-raw,format=RGBA ! appsink) without rgb=True")
    if rgb:
        text += " ! videoconvert ! video/x-raw,format=RGBA"
    return text, not _APPSINK.search(text.split("!")[-1])


def _link_hint(text, message):
    """What to do where @text (a description) did not link to the appsink the reader adds: the
    text linked to a plain appsink says whether its caps (the formats the module reads) are why."""
    if not message.startswith("could not link"):
        return ""
    try:
        Gst.parse_launch(text + " ! appsink")
    except GLib.Error as e:
        # the text's own: its caps, that its elements refuse (GStreamer says so), or a sink at its end
        if "can't handle caps" in e.message:
            return ""
        return " (the description ends in a sink: end it in appsink, or leave the sink out)"
    return _NOT_READABLE


@functools.lru_cache(maxsize=None)
def _caps(text):
    """@text's caps, made once (GStreamer is initialised by then: a reader runs)."""
    return Gst.Caps.from_string(text)


def _convert_hint(caps):
    """What to do about a frame of @caps that the module does not read, where converting helps: a
    video frame of system memory in a format it does not read, which comes through an appsink of
    the user's own (the one the reader adds takes none such, and rgb=True takes none of the user's)
    and videoconvert before it makes readable; nothing for other caps (audio, encoded video, CUDA
    memory) nor for a format it reads (a frame that does not fit its caps)."""
    # caps compared with caps, not read through their structure: GStreamer 1.26's Python gives
    # get_structure () a wrapper of its own, without the structure's methods
    if (caps is None or caps.is_empty() or not caps.is_subset(_caps("video/x-raw"))  # system memory: no features
            or caps.is_subset(_caps("video/x-raw,format={" + ",".join(_LAYOUTS) + "}"))):
        return ""
    return " (convert it before the appsink: ... ! videoconvert ! video/x-raw,format=RGBA ! appsink)"


class Frames:
    """The frames of a pipeline, pulled from its appsinks in turn: an iterator and a context
    manager. Each item is a read-only `Frame` (cudavision.frame) with its `results` (every meta of
    ours, cudavision.results), `source` (the appsink's name) and `buffer` (the Gst.Buffer, for
    metas of others), results and buffer made at their first read. The pipeline plays from the
    first item; its ERROR raises `PipelineError`, its end (EOS on every appsink) ends the loop, and
    leaving the loop (break, an exception, the end, close ()) sets it to NULL.

    The bus is emptied at every pull (looked at first through libgstreamer, popped where it holds
    a message): the types in @messages (a Gst.MessageType mask, e.g. ELEMENT | WARNING) are kept,
    in the bus's order, in `messages`, a list that the caller reads and empties as it likes (those
    posted after the last frame are in it once the loop has ended); the others are dropped, so
    that none piles up (an analyser posts one a frame by default)."""

    def __init__(self, source, rgb=False, max_buffers=4, messages=0):
        Gst.init(None)
        if not isinstance(messages, int):  # a Gst.MessageType is an int
            raise TypeError("messages is a Gst.MessageType mask (e.g. Gst.MessageType.ELEMENT | "
                            f"Gst.MessageType.WARNING, or 0 for none), not {type(messages).__name__}")
        self._added = False  # whether the reader added the appsink (_ADDED)
        if isinstance(source, Gst.Pipeline):
            if rgb:
                raise TypeError("rgb=True converts to RGBA before the appsink the reader adds to a description, "
                                "and a Gst.Pipeline has its own: convert in it (videoconvert ! "
                                "video/x-raw,format=RGBA before its appsink) without rgb=True")
            self.pipeline = source
        elif isinstance(source, str):
            text, self._added = _description(source, rgb)
            try:
                self.pipeline = Gst.parse_launch(text + _ADDED if self._added else text)
            except GLib.Error as e:
                raise PipelineError(e.message + (_link_hint(text, e.message) if self._added else "")) from None
        else:
            raise TypeError(f"frames () takes a pipeline's text, a URI or a Gst.Pipeline, not {type(source).__name__}")
        elements = self._elements()
        self.sinks = [e for e in elements if e.get_factory() and e.get_factory().get_name() == "appsink"]
        if not self.sinks:
            raise TypeError("the pipeline has no appsink to take frames from (add '! appsink' at its end)")
        unlinked = [sink.get_name() for sink in self.sinks if not sink.get_static_pad("sink").is_linked()]
        if unlinked and not any(map(_adds_pads, elements)):
            # nothing reaches it, and it never ends: the loop would wait for it forever
            are, it = ("is", "it") if len(unlinked) == 1 else ("are", "them")
            raise TypeError(f"{', '.join(unlinked)} {are} not linked: no frame would reach {it} (link {it}, "
                            f"or leave {it} out)")
        for sink in self.sinks:
            # the pipeline waits for the loop (no frame dropped), a few frames ahead
            sink.set_property("sync", False)
            sink.set_property("max-buffers", max_buffers)
            sink.set_property("drop", False)
        self.bus = self.pipeline.get_bus()
        self._bus = hash(self.bus)  # the GstBus' address (PyGObject's hash of a GObject)
        self.messages = []
        self._kept = Gst.MessageType(messages)
        self._popped = _ERROR | self._kept
        self._playing = False
        # the appsinks not at their end yet, with their names: a sink's name is fixed once it is in
        # a bin, so it is asked once
        self._live = [(sink, sink.get_name()) for sink in self.sinks]

    def _elements(self):
        it = self.pipeline.iterate_recurse()
        out = []
        while True:
            ok, element = it.next()
            if ok != Gst.IteratorResult.OK:
                if ok == Gst.IteratorResult.RESYNC:
                    it.resync()
                    out = []
                    continue
                return out
            out.append(element)

    def _check_bus(self):
        """Raises the pipeline's ERROR and keeps the messages asked for; pop_filtered drops the rest."""
        while True:
            msg = self.bus.pop_filtered(self._popped)
            if msg is None:
                return
            if msg.type == _ERROR:
                err, debug = msg.parse_error()
                self.close()
                # caps that the appsink added refuses: not negotiated, or not linked where decodebin's
                # pad could not link to it
                refused = self._added and ("not-negotiated" in (debug or "") or "not-linked" in (debug or ""))
                hint = _NOT_READABLE if refused else ""
                raise PipelineError(err.message + hint, msg.src.get_name() if msg.src else None, debug)
            if msg.type & self._kept:
                self.messages.append(msg)

    def __iter__(self):
        return self

    def __next__(self):
        if not self._playing:
            self._playing = True
            if self.pipeline.set_state(Gst.State.PLAYING) == Gst.StateChangeReturn.FAILURE:
                self._check_bus()
                self.close()
                raise PipelineError("the pipeline could not start")
        while True:
            if _have_pending(self._bus):
                self._check_bus()
            live = self._live
            if not live:
                self.close()
                raise StopIteration
            for sink, name in live:
                sample = sink.try_pull_sample(_POLL_NS // len(live))
                if sample is not None:
                    try:
                        f = frame(sample)
                    except Unsupported as e:
                        self.close()
                        raise Unsupported(f"{e}{_convert_hint(sample.get_caps())}") from None
                    f.__class__ = _ReaderFrame  # its results and buffer made when read
                    f._reader_sample, f.source = sample, name
                    return f
                if sink.is_eos():
                    self._live = [entry for entry in self._live if entry[0] is not sink]

    def close(self):
        """Sets the pipeline to NULL (at the loop's end, a break, or an error): nothing runs after;
        from a streaming thread (a pad probe), shortly after (_stop)."""
        if self.pipeline is not None:
            # the messages asked for, posted since the last pull (an interval's last at EOS):
            # NULL flushes the bus
            while self._kept:
                msg = self.bus.pop_filtered(self._kept)
                if msg is None:
                    break
                self.messages.append(msg)
            _stop(self.pipeline)
        self._live = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # on whichever thread drops the last reference: a streaming thread's too (_stop)
        pipeline = getattr(self, "pipeline", None)
        if pipeline is not None:
            _stop(pipeline)


def frames(source, rgb=False, max_buffers=4, messages=0):
    """The frames of @source, a gst-launch description (its appsinks, or one added at its end that
    takes the formats the module reads), a URI or a file's path (decoded by uridecodebin) or a
    Gst.Pipeline with appsinks; `rgb=True` converts them to RGBA on the CPU before the appsink
    added; @messages, a Gst.MessageType mask, the bus messages kept in the reader's `messages`.
    See Frames."""
    return Frames(source, rgb, max_buffers, messages)
