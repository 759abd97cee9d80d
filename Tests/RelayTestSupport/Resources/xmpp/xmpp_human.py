"""A person on XMPP, for the tests: slixmpp as a real client.

Signs in (STARTTLS, trusting the test's certificate), joins the rooms, runs a plan of steps, and
writes what happens as JSON lines to stdout (flushed at once, so a test can read the file while
this runs):
  {"event": "session"} {"event": "joined", "room": ROOM, "nick": NICK} (anyone's presence in a room)
  {"event": "left", "room": ROOM, "nick": NICK}
  {"event": "message", "type": "chat"|"groupchat"|..., "from": FULL JID, "nick": ROOM NICK or null,
   "sender": ROOM NICK in a room, else the bare JID, "text": BODY, "id": ID, "replace": ID or null,
   "reply_to": ID or null, "reply_for": JID or null, "raw": THE STANZA}
  {"event": "disconnected"} {"event": "mark", "name": ...} {"event": "done"} {"event": "error", ...}
On a disconnect it signs in again (every half second) and rejoins, until the plan is done.

With --corrections its client says it reads Last Message Correction (XEP-0308), as every
maintained client does; without, it does not, and the relay must send it whole answers.

Plan steps (JSON list, one object each):
  {"say": TO, "text": TEXT}                  a chat message to TO (a JID)
  {"say_room": ROOM, "text": TEXT, "id": ID, "times": N}   a groupchat message (N times with one id)
  {"wait_join": NICK, "room": ROOM, "timeout": S}   until NICK is in ROOM
  {"wait_from": SENDER, "count": N, "timeout": S}   until N messages from SENDER (a room nick or a bare JID)
  {"wait_text": SENDER, "contains": TEXT, "timeout": S}  until a message from SENDER contains TEXT
  {"sleep": S} {"mark": NAME} {"wait_file": PATH, "timeout": S}
"""
import argparse, asyncio, json, os, sys, time

import slixmpp


def emit(**record):
    record["t"] = time.time()
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


class Person(slixmpp.ClientXMPP):
    def __init__(self, jid, password, rooms, nick, corrections):
        super().__init__(jid, password)
        self.rooms = rooms
        self.nick = nick
        self.register_plugin("xep_0030")
        self.register_plugin("xep_0045")
        self.register_plugin("xep_0199")
        if corrections:
            self.register_plugin("xep_0308")
        self.from_counts = {}
        self.texts = {}
        self.members = {}
        self.ready = False
        self.add_event_handler("session_start", self.start)
        self.add_event_handler("message", self.on_message)
        # The MUC plugin's events: it keeps room presence from the roster's handlers.
        for room in rooms:
            self.add_event_handler("muc::%s::presence" % room, self.on_presence)
        self.add_event_handler("disconnected", self.on_disconnected)
        self.add_event_handler("failed_auth", lambda e: emit(event="error", reason="failed auth"))

    async def start(self, event):
        self.send_presence()
        for room in self.rooms:
            self.plugin["xep_0045"].join_muc(room, self.nick, maxhistory="0")
        emit(event="session")
        self.ready = True

    def on_disconnected(self, event):
        self.ready = False
        self.members = {}
        emit(event="disconnected")

    def on_presence(self, presence):
        if os.environ.get("XMPP_HUMAN_RAW"):
            emit(event="presence", text=str(presence))
        room = presence["from"].bare
        if room not in self.rooms:
            return
        nick = presence["from"].resource
        if presence["type"] == "unavailable":
            if nick in self.members.get(room, set()):
                emit(event="left", room=room, nick=nick)
            self.members.setdefault(room, set()).discard(nick)
        elif presence["type"] != "error":
            if nick not in self.members.setdefault(room, set()):
                self.members[room].add(nick)
                emit(event="joined", room=room, nick=nick)

    def on_message(self, message):
        body = message["body"]
        kind = message["type"]
        xml = message.xml
        replace = xml.find("{urn:xmpp:message-correct:0}replace")
        reply = xml.find("{urn:xmpp:reply:0}reply")
        if kind == "groupchat":
            if xml.find("{urn:xmpp:delay}delay") is not None:
                return
            nick = message["from"].resource
            sender = nick
        else:
            nick = message["from"].resource if message["from"].bare in self.rooms else None
            sender = nick if nick else message["from"].bare
        if not body:
            return
        self.from_counts[sender] = self.from_counts.get(sender, 0) + 1
        self.texts.setdefault(sender, []).append(body)
        emit(event="message", type=kind, **{"from": str(message["from"])}, nick=nick, sender=sender, text=body, id=message["id"],
             replace=replace.get("id") if replace is not None else None,
             reply_to=reply.get("id") if reply is not None else None,
             reply_for=reply.get("to") if reply is not None else None,
             raw=str(message))


async def run(args):
    plan = json.loads(args.plan)
    rooms = [r for r in args.rooms.split(",") if r]
    person = Person(args.jid, args.password, rooms, args.nick, args.corrections)
    person.ssl_context.load_verify_locations(args.ca)

    def connect():
        person.connect(host=args.host, port=args.port)

    connect()
    end = time.time() + args.limit
    step = 0
    step_started = time.time()
    last_try = time.time()
    while time.time() < end:
        await asyncio.sleep(0.05)
        if not person.is_connected() and time.time() - last_try > 0.5:
            last_try = time.time()
            connect()
            continue
        if step >= len(plan):
            break
        current = plan[step]
        done = False
        timeout = current.get("timeout", 60)
        if "say" in current:
            if person.ready:
                person.send_message(mto=current["say"], mbody=current["text"], mtype="chat")
                done = True
        elif "say_room" in current:
            if person.ready:
                for _ in range(current.get("times", 1)):
                    message = person.make_message(mto=current["say_room"], mbody=current["text"], mtype="groupchat")
                    if "id" in current:
                        message["id"] = current["id"]
                    message.send()
                done = True
        elif "wait_join" in current:
            done = current["wait_join"] in person.members.get(current["room"], set())
        elif "wait_from" in current:
            done = person.from_counts.get(current["wait_from"], 0) >= current["count"]
        elif "wait_text" in current:
            done = any(current["contains"] in text for text in person.texts.get(current["wait_text"], []))
        elif "sleep" in current:
            done = time.time() - step_started >= current["sleep"]
        elif "mark" in current:
            emit(event="mark", name=current["mark"])
            done = True
        elif "wait_file" in current:
            done = os.path.exists(current["wait_file"])
        if not done and time.time() - step_started > timeout:
            emit(event="error", reason="step %d timed out: %s" % (step, json.dumps(current)))
            break
        if done:
            step += 1
            step_started = time.time()
    else:
        emit(event="error", reason="the plan did not finish within the limit")
    # What is still on its way (a correction, a last part) is read for a moment more.
    await asyncio.sleep(0.5)
    emit(event="done", step=step)
    person.disconnect()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--jid", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--nick", required=True)
    parser.add_argument("--rooms", default="")
    parser.add_argument("--corrections", action="store_true")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--limit", type=float, default=120)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
