import Foundation
import Logging
import RelayCore
import RelayPipeline
import RelayPlatform

/// One message of a reply on IRC: lines to the channel, or to the asker privately.
struct IRCOutgoing: Sendable, Hashable {
    var lines: [String]
    var privately: Bool
}

/// IRC's delivery primitives, for `Deliverer` (platform "irc").
///
/// IRC has no edits, no threads and no message ids: no placeholder, no streaming, every part a
/// new message, confirmed by the server before it counts as sent (`IRCLink`).
///
/// - In a channel a reply's first line starts with the asker's nick (`ada: …`), and at most
///   `channelLines` lines show there; a longer reply shows its head, a line saying the rest went
///   to the asker privately (where it follows in messages of `privateLines` lines) and its
///   agreement footer.
/// - A private reply (`/settings`, errors), and anything asked in private, goes to the asker.
/// - Every line fits IRC's 512 bytes as the server relays it, with the relay's own prefix
///   (`:nick!user@host PRIVMSG target :`) counted at its longest (`lineLimit`); nicks of the
///   channel's members are written so that none is highlighted (`IRCText.withoutHighlights`).
/// - Sends are paced under the server's flood limits (`IRCPacer`), the outbox asking before it
///   starts one (`takeTurn`), so a queue of replies holds no delivery slot while it waits.
struct IRCDelivery: DeliveryPlatform {
    typealias Place = Audience

    enum Route: Sendable, Hashable {
        /// PRIVMSG lines.
        case send
    }

    struct Failure: DeliveryFailure {
        var error: IRCLink.SendError
        var deliveryOutcome: DeliveryOutcome { .retryable(reason: reason) }
        var reason: String {
            switch error {
            case .notConnected: "not connected to the IRC server (connecting, or reconnecting)"
            case .connectionLost: "the IRC connection ended before the server confirmed the lines"
            case .unconfirmed: "the IRC server did not confirm the lines in time"
            }
        }
    }

    /// Lines a private message of a reply holds (several messages when longer).
    static let privateLines = 10
    /// Messages one reply takes at most: the channel's lines and two private messages, some
    /// 24 lines (about one `/history last` page); a longer reply is cut with the note naming
    /// the page to read on from. At IRC's pace (a line a second or more) 74 lines would take
    /// two minutes.
    static let maxMessages = 3
    /// The longest prefix a server puts before the relay's lines: `:` nick `!` user `@` host
    /// and a space, with a user name of 10 (a `~` added), a host of 63 (a DNS name's longest
    /// label… and most cloaks) and the nick's longest fallback.
    static func prefixBytes(nick: String) -> Int { 1 + nick.utf8.count + 2 + 1 + 11 + 1 + 63 + 1 }

    let platform = IRCPlatform.name
    let link: IRCLink
    let pacer: IRCPacer
    let configuredNick: String
    let channelLines: Int
    let logger: Logger

    /// Its replies leave on the one connection: the replica that holds it delivers them.
    var deliveryLeaseName: String { IRCPlatform.connectionLease }

    var maxParts: Int { Self.maxMessages }

    func takeTurn(for entry: OutboxEntry, now: Date) -> Duration { pacer.wait(now: now) }
    func platformWait(now: Date) -> Duration { pacer.wait(now: now) }
    func streaming(at address: String) -> StreamingPace { .none }

    // MARK: Primitives

    func decode(_ address: String) -> IRCAddress? { IRCAddress.decode(address) }

    /// Bytes of text one PRIVMSG to `target` may carry.
    func lineLimit(to target: String) -> Int {
        510 - Self.prefixBytes(nick: configuredNick + "__") - "PRIVMSG \(target) :".utf8.count
    }

    func render(_ reply: Reply, entryID: String, address: IRCAddress) -> [IRCOutgoing] {
        let (text, footer) = IRCRenderer.text(reply)
        let inChannel = place(of: reply, address: address) == .channel
        let limit = min(lineLimit(to: address.channel ?? address.nick), lineLimit(to: address.nick))
        guard inChannel, let channel = address.channel else {
            return Self.privately(IRCText.lines(text, limit: limit) + (footer.map { IRCText.lines($0, limit: limit) } ?? []))
        }
        let members = link.presence.members[IRCText.fold(channel)] ?? []
        let lead = "\(address.nick): "
        let lines = IRCText.lines(text, limit: limit - lead.utf8.count, sparing: members)
        let footerLines = footer.map { IRCText.lines($0, limit: limit, sparing: members) } ?? []
        guard !lines.isEmpty || !footerLines.isEmpty else { return [] }
        if lines.count + footerLines.count <= channelLines {
            var shown = lines + footerLines
            shown[0] = lead + shown[0]
            return [IRCOutgoing(lines: shown, privately: false)]
        }
        // The head of the answer, where the rest went, and the agreement: what the channel reads.
        let head = max(1, channelLines - 1 - footerLines.count)
        let rest = lines.count - head
        var shown = Array(lines.prefix(head))
        shown[0] = lead + shown[0]
        shown.append("… \(rest) more line\(rest == 1 ? "" : "s") in a private message to \(address.nick).")
        return [IRCOutgoing(lines: shown + footerLines, privately: false)] + Self.privately(Array(lines.dropFirst(head)))
    }

    private static func privately(_ lines: [String]) -> [IRCOutgoing] {
        stride(from: 0, to: lines.count, by: privateLines).map {
            IRCOutgoing(lines: Array(lines[$0..<min(lines.count, $0 + privateLines)]), privately: true)
        }
    }

    func render(_ progress: RunProgress) -> IRCOutgoing {
        IRCOutgoing(lines: IRCRenderer.line(progress).map { IRCText.lines($0, limit: 300) } ?? [], privately: false)
    }

    func render(note: String) -> IRCOutgoing { IRCOutgoing(lines: IRCText.lines(note, limit: 300), privately: false) }

    func place(of reply: Reply, address: IRCAddress) -> Audience { reply.isPrivate || address.isPrivate ? .asker : .channel }

    /// A private reply is a PRIVMSG to the asker's nick.
    func reachesAskerAlone(_ reply: Reply, address: IRCAddress) async -> Bool { reply.isPrivate || address.isPrivate }

    func placeholder(address: IRCAddress, earlier: OutboxEntry?) -> Placeholder<Audience>? { nil }

    func progressRoute(address: IRCAddress) -> Route? { .send }

    func routes(for part: PartToSend<IRCAddress, Audience>) -> [PartRoute<Route>] { [.post(.send)] }

    func post(_ message: IRCOutgoing, via route: Route, address: IRCAddress, key: SendKey) async throws(Failure) -> String? {
        guard !message.lines.isEmpty else { return nil }
        let target = message.privately ? address.nick : (address.channel ?? address.nick)
        do {
            try await link.send(message.lines.map { IRCMessage("PRIVMSG", [target, $0]) })
        } catch {
            throw Failure(error: error)
        }
        return nil
    }

    func edit(_ placeholder: Placeholder<Audience>, to message: IRCOutgoing, address: IRCAddress, key: SendKey) async throws(Failure) {
        // Never called: IRC has no placeholder (`placeholder` is always nil).
        _ = try await post(message, via: .send, address: address, key: key)
    }

    func unreachable(address: IRCAddress) -> String { "no way to reach IRC" }
}
