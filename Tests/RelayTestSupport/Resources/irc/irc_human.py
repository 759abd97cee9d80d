"""A person on IRC, for the tests: the `irc` library (jaraco/irc) as a real client.

Connects to the server, joins the channels, runs a plan of steps, and writes what happens as
JSON lines to stdout (flushed at once, so a test can read the file while this runs):
  {"event": "welcome"} {"event": "joined", "from": NICK, "target": CHANNEL} {"event": "quit", "from": NICK}
  {"event": "message", "kind": "pubmsg"|"privmsg"|"pubnotice"|"privnotice", "from": ..., "target": ..., "text": ...}
  {"event": "raw", "text": ...} (every line received, with IRC_HUMAN_RAW=1)
  {"event": "disconnected"} {"event": "mark", "name": ...} {"event": "done"} {"event": "error", ...}
On a disconnect it reconnects (every half second) and rejoins, until the plan is done.

Plan steps (JSON list, one object each):
  {"say": TARGET, "text": TEXT}       a PRIVMSG
  {"ctcp": TARGET, "text": TEXT}      a CTCP request (VERSION, PING…)
  {"wait_join": NICK, "channel": C, "timeout": S}   until NICK is in C
  {"wait_from": NICK, "count": N, "timeout": S}     until N messages from NICK were received in all
  {"wait_text": NICK, "contains": TEXT, "timeout": S}  until a message from NICK contains TEXT
  {"sleep": S}
  {"mark": NAME}
  {"wait_file": PATH, "timeout": S}   until PATH exists (a test's signal)
"""
import argparse, json, os, ssl, sys, time

from jaraco.stream import buffer
import irc.client
import irc.connection

irc.client.ServerConnection.buffer_class = buffer.LenientDecodingLineBuffer


def emit(**record):
    record["t"] = time.time()
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-ca")
    parser.add_argument("--nick", required=True)
    parser.add_argument("--password")
    parser.add_argument("--channels", default="")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--limit", type=float, default=120)
    args = parser.parse_args()
    plan = json.loads(args.plan)
    channels = [c for c in args.channels.split(",") if c]

    reactor = irc.client.Reactor()
    state = {"from": {}, "texts": {}, "members": {}, "connected": False}

    def factory():
        if args.tls_ca:
            context = ssl.create_default_context(cafile=args.tls_ca)
            return irc.connection.Factory(wrapper=lambda sock: context.wrap_socket(sock, server_hostname=args.host))
        return irc.connection.Factory()

    server = reactor.server()

    def connect():
        try:
            server.connect(args.host, args.port, args.nick, password=args.password, connect_factory=factory())
            state["connected"] = True
        except irc.client.ServerConnectionError as error:
            emit(event="error", reason=str(error))
            state["connected"] = False

    def on_welcome(connection, event):
        emit(event="welcome")
        for channel in channels:
            connection.join(channel)

    def on_join(connection, event):
        channel = event.target.lower()
        state["members"].setdefault(channel, set()).add(event.source.nick.lower())
        emit(event="joined", **{"from": event.source.nick}, target=event.target)

    def on_namreply(connection, event):
        channel = event.arguments[1].lower()
        for name in event.arguments[2].split():
            state["members"].setdefault(channel, set()).add(name.lstrip("@+%&~").lower())

    def on_part(connection, event):
        state["members"].get(event.target.lower(), set()).discard(event.source.nick.lower())

    def on_quit(connection, event):
        emit(event="quit", **{"from": event.source.nick})
        for members in state["members"].values():
            members.discard(event.source.nick.lower())

    def on_message(connection, event):
        text = event.arguments[0] if event.arguments else ""
        nick = event.source.nick if event.source else ""
        state["from"][nick.lower()] = state["from"].get(nick.lower(), 0) + 1
        state["texts"].setdefault(nick.lower(), []).append(text)
        emit(event="message", kind=event.type, **{"from": nick}, target=event.target, text=text)

    def on_ctcpreply(connection, event):
        emit(event="ctcpreply", **{"from": event.source.nick}, text=" ".join(event.arguments))

    def on_disconnect(connection, event):
        emit(event="disconnected")
        state["connected"] = False
        state["members"] = {}

    for kind in ["pubmsg", "privmsg", "pubnotice", "privnotice", "action"]:
        reactor.add_global_handler(kind, on_message)
    reactor.add_global_handler("ctcpreply", on_ctcpreply)
    reactor.add_global_handler("all_raw_messages", lambda c, e: emit(event="raw", text=e.arguments[0]) if os.environ.get("IRC_HUMAN_RAW") else None)
    reactor.add_global_handler("welcome", on_welcome)
    reactor.add_global_handler("join", on_join)
    reactor.add_global_handler("namreply", on_namreply)
    reactor.add_global_handler("part", on_part)
    reactor.add_global_handler("quit", on_quit)
    reactor.add_global_handler("disconnect", on_disconnect)

    connect()
    end = time.time() + args.limit
    step = 0
    step_started = time.time()
    last_try = time.time()
    while time.time() < end:
        reactor.process_once(timeout=0.05)
        if not state["connected"] and time.time() - last_try > 0.5:
            last_try = time.time()
            connect()
            continue
        if step >= len(plan):
            break
        current = plan[step]
        done = False
        timeout = current.get("timeout", 60)
        if "say" in current:
            if state["connected"] and server.is_connected():
                server.privmsg(current["say"], current["text"])
                done = True
        elif "ctcp" in current:
            if state["connected"] and server.is_connected():
                # Not `server.ctcp`: irc 20.5 sends "{ctcptype}" literally when no parameter is given.
                server.privmsg(current["ctcp"], "\x01%s\x01" % current["text"])
                done = True
        elif "wait_join" in current:
            done = current["wait_join"].lower() in state["members"].get(current["channel"].lower(), set())
        elif "wait_from" in current:
            done = state["from"].get(current["wait_from"].lower(), 0) >= current["count"]
        elif "wait_text" in current:
            done = any(current["contains"] in text for text in state["texts"].get(current["wait_text"].lower(), []))
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
    # What is still on its way (a reply's last lines) is read for a moment more.
    settle = time.time() + 0.5
    while time.time() < settle:
        reactor.process_once(timeout=0.05)
    emit(event="done", step=step)
    try:
        server.disconnect("bye")
    except Exception:
        pass


if __name__ == "__main__":
    main()
