"""An XMPP server that signs the relay in (plain text, PLAIN: allowed on loopback only) and then
sends what XMPP does not allow, for the tests of the relay's stream reader (issue 43, point 7).

Prints JSON lines: {"event": "listening", "port": P}, {"event": "connection", "n": N} per
connection, {"event": "closed", "n": N, "tail": LAST BYTES THE RELAY SENT} when the relay ends it.

Modes (argv[1]): oversized (a stanza that never ends, past 256 KB), malformed (mismatched tags),
entity (an entity XMPP does not define), dtd (a document type declaration), garbage (bytes that
are not UTF-8).
"""
import asyncio, json, sys

MODE = sys.argv[1]
HEADER = (b"<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' "
          b"id='s1' from='localhost' version='1.0'>")
HOSTILE = {
    "oversized": b"<message from='a@localhost/x' type='chat'><body>" + b"A" * 400_000,
    "malformed": b"<message from='a@localhost/x' type='chat'><body>x</wrong></message>",
    "entity": b"<message from='a@localhost/x' type='chat'><body>&xxe;</body></message>",
    "dtd": b"<!DOCTYPE lol [<!ENTITY lol 'lol'>]>",
    "garbage": b"<message from='a@localhost/x' type='chat'><body>\xff\xfe\xfd</body></message>",
}
count = 0


def emit(**record):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


async def read_until(reader, marker, seen):
    while marker not in seen:
        chunk = await reader.read(4096)
        if not chunk:
            raise EOFError
        seen += chunk
    index = seen.index(marker) + len(marker)
    return seen[index:]


async def handle(reader, writer):
    global count
    count += 1
    n = count
    emit(event="connection", n=n)
    received = b""
    try:
        rest = await read_until(reader, b"version='1.0'>", b"")
        writer.write(HEADER + b"<stream:features><mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>")
        rest = await read_until(reader, b"</auth>", rest)
        writer.write(b"<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>")
        rest = await read_until(reader, b"version='1.0'>", rest)
        writer.write(HEADER + b"<stream:features><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/></stream:features>")
        rest = await read_until(reader, b"</iq>", rest)
        writer.write(b"<iq type='result' id='bind'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>rhea@localhost/rhea-relay</jid></bind></iq>")
        await writer.drain()
        await asyncio.sleep(0.2)
        writer.write(HOSTILE[MODE])
        await writer.drain()
        while True:
            chunk = await asyncio.wait_for(reader.read(4096), 30)
            if not chunk:
                break
            received += chunk
    except Exception:
        pass
    emit(event="closed", n=n, tail=received[-300:].decode("utf-8", "replace"))
    writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    emit(event="listening", port=server.sockets[0].getsockname()[1])
    async with server:
        await asyncio.sleep(120)


asyncio.run(main())
