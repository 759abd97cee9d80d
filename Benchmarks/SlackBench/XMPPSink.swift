import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// An XMPP server for a `--platform xmpp` run: the part of RFC 6120 the relay speaks to a
/// server — the stream's header and features, SASL PLAIN (plain text on loopback: the relay
/// allows it only there), resource binding, presence and a room's join, pings, service
/// discovery, `<message/>` — answered in process on a loopback port, so what the run measures
/// is the relay's own cost, not Prosody's.
///
/// Each user writes to the relay one to one, from `user<user>@bench/phone`: command `index`
/// reaches it as a `chat` message `!translate ja … command number <index>`, and a `<message/>`
/// naming that number is handed to the `ReplySink` (a correction counts as the message it
/// corrects; a new message, even one sent again with the same id, as one more shown). The people's clients say they read
/// no corrections, so every answer is one message, as on a client without XEP-0308; the
/// relay's confirmation pings are answered at once. A command typed while no relay is signed in
/// is lost.
final class XMPPSink: PlatformPeer, SocketPeer {
    private struct State {
        var relay: NIOAsyncChannelOutboundWriter<ByteBuffer>?
        var ready = false
        var pings = 0
        var discoveries = 0
        var lost = 0
    }

    private let state = Mutex(State())
    private let replies: ReplySink
    private let channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    private let task = Mutex<Task<Void, Never>?>(nil)
    let port: Int

    private init(port: Int, channel: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, replies: ReplySink) {
        self.port = port
        self.channel = channel
        self.replies = replies
    }

    var environment: [String: String] {
        ["XMPP_JID": "rhea@bench", "XMPP_PASSWORD": "bench-password", "XMPP_SERVER": "127.0.0.1:\(port)", "XMPP_ROOMS": "bench@conference.bench"]
    }

    var summary: String? {
        let (pings, discoveries, lost) = state.withLock { ($0.pings, $0.discoveries, $0.lost) }
        return "XMPP server answered \(pings) confirmation pings and \(discoveries) client discoveries; \(lost) commands typed with no relay signed in"
    }

    static func start(forwardingTo sink: ReplySink, logger: Logger) async throws -> XMPPSink {
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { child in
                child.eventLoop.makeCompletedFuture { try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: child) }
            }
        let xmpp = XMPPSink(port: channel.channel.localAddress?.port ?? 0, channel: channel, replies: sink)
        xmpp.task.withLock { $0 = Task { await xmpp.accept() } }
        return xmpp
    }

    private func accept() async {
        _ = try? await channel.executeThenClose { connections in
            try await withThrowingDiscardingTaskGroup { group in
                for try await connection in connections {
                    group.addTask { await self.serve(connection) }
                }
            }
        }
    }

    static let header =
        "<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='bench' from='bench' version='1.0'>"

    /// One relay's connection, until it closes. The relay writes each element whole and escapes
    /// every `<` in text, so an element ends at its first `/>` or `</name>`.
    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        try? await connection.executeThenClose { bytes, outbound in
            state.withLock { $0.relay = outbound }
            defer {
                state.withLock { state in
                    state.relay = nil
                    state.ready = false
                }
            }
            var pending = ""
            var authenticated = false
            for try await buffer in bytes {
                let arrived = ContinuousClock.now
                pending += String(buffer: buffer)
                while let (element, rest) = Self.next(in: pending) {
                    pending = rest
                    var answer = ""
                    if element.hasPrefix("<?xml") || element.hasPrefix("<stream:stream") {
                        let features =
                            authenticated
                            ? "<bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'/>"
                            : "<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms>"
                        answer = Self.header + "<stream:features>" + features + "</stream:features>"
                    } else if element.hasPrefix("<auth") {
                        authenticated = true
                        answer = "<success xmlns='urn:ietf:params:xml:ns:xmpp-sasl'/>"
                    } else if element.hasPrefix("</stream:stream") {
                        return
                    } else if element.hasPrefix("<iq") {
                        let id = Self.attribute("id", in: element) ?? ""
                        if element.contains("xmpp-bind") {
                            answer = "<iq type='result' id='\(id)'><bind xmlns='urn:ietf:params:xml:ns:xmpp-bind'><jid>rhea@bench/rhea-relay</jid></bind></iq>"
                            state.withLock { $0.ready = true }
                        } else if element.contains("disco#info") {
                            state.withLock { $0.discoveries += 1 }
                            let to = Self.attribute("to", in: element) ?? "bench"
                            answer = "<iq type='result' id='\(id)' from='\(to)'><query xmlns='http://jabber.org/protocol/disco#info'/></iq>"
                        } else {
                            if element.contains("urn:xmpp:ping") { state.withLock { $0.pings += 1 } }
                            answer = "<iq type='result' id='\(id)' from='bench'/>"
                        }
                    } else if element.hasPrefix("<presence"), let to = Self.attribute("to", in: element) {
                        // A room's join: the relay is in, as the nick it asked for.
                        answer = "<presence from='\(to)'><x xmlns='http://jabber.org/protocol/muc#user'><status code='110'/></x></presence>"
                    } else if element.hasPrefix("<message"), let range = element.range(of: "command number ") {
                        if let index = Int(element[range.upperBound...].prefix { $0.isNumber }) {
                            // A new message counts as one more shown (a resend too: not every client
                            // keeps messages by id); a correction, as the message it corrects.
                            let corrected = element.range(of: "<replace").flatMap { Self.attribute("id", in: String(element[$0.lowerBound...])) }
                            replies.arrived(index, at: arrived, busy: element.contains("ahead of you"), message: corrected)
                        }
                    }
                    if !answer.isEmpty { try await outbound.write(ByteBuffer(string: answer)) }
                }
            }
        }
    }

    /// The first whole element (or the stream's header, or its end) in `text`, and what follows.
    static func next(in text: String) -> (String, String)? {
        guard let start = text.firstIndex(of: "<") else { return nil }
        let from = text[start...]
        if from.hasPrefix("<?xml") {
            // The declaration and the stream's header, together.
            guard let header = from.range(of: "<stream:stream"), let end = from[header.upperBound...].firstIndex(of: ">") else { return nil }
            return (String(from[..<from.index(after: end)]), String(from[from.index(after: end)...]))
        }
        guard let tagEnd = from.firstIndex(of: ">") else { return nil }
        let firstTag = from[...tagEnd]
        if firstTag.hasSuffix("/>") || firstTag.hasPrefix("</") || firstTag.hasPrefix("<stream:stream") {
            return (String(firstTag), String(from[from.index(after: tagEnd)...]))
        }
        let name = firstTag.dropFirst().prefix { $0 != " " && $0 != ">" && $0 != "/" }
        guard let close = from.range(of: "</\(name)>") else { return nil }
        return (String(from[..<close.upperBound]), String(from[close.upperBound...]))
    }

    static func attribute(_ name: String, in element: String) -> String? {
        let firstTag = element.prefix { $0 != ">" }
        for quote in ["'", "\""] {
            if let range = firstTag.range(of: " \(name)=\(quote)") {
                return String(firstTag[range.upperBound...].prefix { String($0) != quote })
            }
        }
        return nil
    }

    func connected() async {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, !state.withLock({ $0.ready }) {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Command `index` from user `user`, one to one.
    func post(_ index: Int, user: Int) -> Bool {
        guard let relay = state.withLock({ $0.ready ? $0.relay : nil }) else {
            state.withLock { $0.lost += 1 }
            return false
        }
        let stanza =
            "<message from='user\(user)@bench/phone' to='rhea@bench' type='chat' id='c\(index)'><body>!translate ja Good morning, this is command number \(index)</body></message>"
        Task { try? await relay.write(ByteBuffer(string: stanza)) }
        return true
    }

    func stop() async {
        try? await channel.channel.close()
        let task = task.withLock { $0 }
        task?.cancel()
        _ = await task?.value
    }
}
