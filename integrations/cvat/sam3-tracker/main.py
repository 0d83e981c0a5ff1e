"""Nuclio handler: CVAT's tracker protocol over sam3cpp's Python module, on SAM 3.1's video bundle.

CVAT posts {"image": base64 frame, "shapes": [[xtl, ytl, xbr, ybr], ...], "states": [state or None, ...]}
and reads {"shapes": [...], "states": [...]}, one of each per shape (docs/cvat.md, "The tracker"). A
shape without a state starts an object on this frame; one with a state is followed onto this frame.
States are {"session", "object"}: the tracker's memory stays in this worker (a bounded LRU of
sessions, SAM3_TRACKER_SESSIONS), which is why function.yaml runs one worker: another one would not
know the sessions. The same protocol as `sam3 serve`'s sam3-tracker (apps/server/protocols/cvat_tracker.cpp).
"""
import base64
import collections
import io
import json
import numbers
import os
import secrets

import numpy as np
from PIL import Image

import sam3cpp
from sam3cpp import _native


class _Session:
    def __init__(self, tracker, width, height, boxes):
        self.tracker, self.width, self.height, self.boxes, self.next_index = tracker, width, height, boxes, 1


class _Refused(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def init_context(context):
    context.user_data.model = sam3cpp.Model(os.environ.get("SAM3_MODEL", "/opt/nuclio/models/sam3.1"))
    context.user_data.sessions = collections.OrderedDict()  # id -> _Session, the most recently used last
    context.user_data.capacity = max(1, int(os.environ.get("SAM3_TRACKER_SESSIONS", "32")))
    context.logger.info(f"sam3cpp tracker ready: model {context.user_data.model.directory}")


def _rectangle(shape, i):
    if (not isinstance(shape, list) or len(shape) != 4
            or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v) for v in shape)):
        raise _Refused(400, f"shapes[{i}] must be a rectangle [xtl, ytl, xbr, ybr] in pixels (CVAT's tracker tracks rectangles)")
    x0, y0, x1, y1 = (float(v) for v in shape)
    return [min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)]


def _inside(box, width, height, i):
    """CVAT lets a rectangle reach past the frame's edges; the tracker's box is its part inside."""
    x0, y0, x1, y1 = np.clip(box[0], 0, width), np.clip(box[1], 0, height), np.clip(box[2], 0, width), np.clip(box[3], 0, height)
    if x1 <= x0 or y1 <= y0:
        raise _Refused(400, f"shapes[{i}] has no area inside the {width}x{height} frame")
    return [float(x0), float(y0), float(x1), float(y1)]


def _track(user_data, body):
    try:
        image = np.asarray(Image.open(io.BytesIO(base64.b64decode(body["image"], validate=True))).convert("RGB"))
    except Exception as e:  # a frame that is not an image is the caller's error
        raise _Refused(400, f"\"image\" must be the frame's bytes in base64: {e}")
    shapes, states = body.get("shapes") or [], body.get("states") or []
    if not isinstance(shapes, list) or not isinstance(states, list):
        raise _Refused(400, "\"shapes\" and \"states\" must be lists, one state (or null) per shape")
    if len(states) > len(shapes):
        raise _Refused(400, f"\"states\" has {len(states)} entries for {len(shapes)} shapes: at most one state per shape")
    height, width = image.shape[:2]
    boxes = [_rectangle(s, i) for i, s in enumerate(shapes)]
    refs, starting, followed = [], [], {}
    # Everything is checked before any session moves on: a refused call changes nothing.
    for i in range(len(shapes)):
        state = states[i] if i < len(states) else None
        if state is None:
            boxes[i] = _inside(boxes[i], width, height, i)
            refs.append(None)
            starting.append(i)
            continue
        if (not isinstance(state, dict) or not isinstance(state.get("session"), str)
                or not isinstance(state.get("object"), int) or state["object"] < 0):
            raise _Refused(400, f"states[{i}] is not a state sam3-tracker gave (an object {{\"session\": \"...\", "
                                "\"object\": n}, or null to start tracking the shape)")
        session = user_data.sessions.get(state["session"])
        if session is None:
            raise _Refused(410, f"the tracker state of shapes[{i}] has expired: this function keeps the "
                                f"{user_data.capacity} most recently used tracking sessions (SAM3_TRACKER_SESSIONS) and "
                                "forgets them when it restarts; in CVAT, turn the object's tracking off and on again")
        user_data.sessions.move_to_end(state["session"])
        if state["object"] >= len(session.boxes):
            raise _Refused(400, f"states[{i}] names object {state['object']} of a session that follows {len(session.boxes)}")
        if (session.width, session.height) != (width, height):
            raise _Refused(400, f"the frame is {width}x{height} but shapes[{i}] was started on a "
                                f"{session.width}x{session.height} frame; start it again on this one")
        refs.append((state["session"], state["object"]))
        followed[state["session"]] = session

    started_id = None
    if starting:
        objects = [{"frame": 0, "box": boxes[i]} for i in starting]
        tracker = _native.VideoTracker(user_data.model, [], objects, hotstart_delay=0)  # this frame's rectangles now
        tracker.push(image, 0, 0.0)  # the objects' first memories; CVAT keeps its own rectangles here
        started_id = secrets.token_hex(16)
        user_data.sessions[started_id] = _Session(tracker, width, height, [boxes[i] for i in starting])
        while len(user_data.sessions) > user_data.capacity:
            user_data.sessions.popitem(last=False)
    for session_id, session in followed.items():
        try:
            results = session.tracker.push(image, session.next_index, float(session.next_index))
        except Exception:
            user_data.sessions.pop(session_id, None)  # cut off mid-frame: its memory is half updated
            raise
        session.next_index += 1
        for result in results:  # a session's objects are numbered 1, 2, ... in the order given
            for k, object_id in enumerate(result.ids.tolist()):
                if 0 < object_id <= len(session.boxes):
                    session.boxes[object_id - 1] = [float(v) for v in result.boxes[k]]  # kept while lost

    out_shapes, out_states, next_started = [], [], 0
    for i, ref in enumerate(refs):
        if ref is None:
            out_shapes.append(boxes[i])
            out_states.append({"session": started_id, "object": next_started})
            next_started += 1
        else:
            out_shapes.append(followed[ref[0]].boxes[ref[1]])
            out_states.append({"session": ref[0], "object": ref[1]})
    return {"shapes": out_shapes, "states": out_states}


def handler(context, event):
    body = event.body if isinstance(event.body, dict) else json.loads(event.body)
    try:
        answer = _track(context.user_data, body if isinstance(body, dict) else {})
    except _Refused as e:
        return context.Response(body=json.dumps({"error": str(e)}), content_type="application/json", status_code=e.status)
    except sam3cpp.InvalidArgumentError as e:
        return context.Response(body=json.dumps({"error": str(e)}), content_type="application/json", status_code=400)
    return context.Response(body=json.dumps(answer), content_type="application/json", status_code=200)
