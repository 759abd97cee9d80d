import Foundation
import Logging
import RelayCore
import RelayPipeline
import Synchronization

/// What the adapter does with each `<message/>` the server routes to the relay: a command for
/// the relay becomes an `Event` and an `XMPPAddress` in the inbox; anything else is left alone.
///
/// - In a room (`groupchat`): `!translate fr …` (a `!word` that is not the relay's is another
///   bot's), or the relay addressed by its room nick: `Rhea: translate fr …`, `Rhea, …` (the nick
///   alone shows the help). The room's history (`<delay/>`) and the relay's own messages are not
///   commands.
/// - One to one (`chat`, `normal`, a room's private message): anything — `translate fr …`,
///   `!translate …`, `/translate …`; other words are fact-checked.
/// - Never: errors, messages without a body (chat states, receipts), a person's correction of
///   a message (XEP-0308: the command already ran as first written), the relay's own messages
///   copied back (carbons).
struct XMPPInbound: Sendable {
    let inbox: any RelayInbox
    let roomCorrections: Bool
    let logger: Logger
    let clients: CorrectingClients

    init(inbox: any RelayInbox, roomCorrections: Bool, logger: Logger) {
        self.inbox = inbox
        self.roomCorrections = roomCorrections
        self.logger = logger
        self.clients = CorrectingClients()
    }

    /// A command the relay runs, where it was said.
    struct Command: Sendable, Hashable {
        var line: String
        var address: XMPPAddress
        /// The platform's key for the message (its sender and id), so a message the server
        /// delivers twice runs once.
        var key: String?
    }

    /// Reads `message` for the relay (bound as `me`, known as `nick(room)` in each room it is
    /// in). `corrections` is whether a one-to-one asker's client reads corrections, asked
    /// only when the message is a command.
    static func command(in message: XMLElement, me: JID?, nick: (String) -> String?, roomCorrections: Bool) -> Command? {
        guard let from = message[attribute: "from"].flatMap(JID.init) else { return nil }
        let type = message[attribute: "type"] ?? "normal"
        guard type != "error", message.child("replace", namespace: XMPPNamespace.correction) == nil,
            let body = message.child("body", namespace: XMPPNamespace.client)?.text
        else { return nil }
        let text = body.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty, text.utf8.count <= 16_000 else { return nil }
        let id = message[attribute: "id"]
        if type == "groupchat" {
            let room = from.bare.description
            guard let mine = nick(room), let sender = from.resource, sender != mine,
                message.child("delay", namespace: XMPPNamespace.delay) == nil
            else { return nil }
            // The room's own id for the message, where it gives one, is what replies name.
            let stanzaID = message.children.first { $0.name == "stanza-id" && $0.namespace == XMPPNamespace.stanzaID && $0[attribute: "by"] == room }
            let address = XMPPAddress(
                room: room, from: from.description, nick: sender, replyTo: stanzaID?[attribute: "id"] ?? id, corrections: roomCorrections)
            let key = id.map { "\(from)|\($0)" }
            if text.hasPrefix(BangCommands.prefix) {
                return BangCommands.line(String(text.dropFirst())).map { Command(line: $0, address: address, key: key) }
            }
            guard let rest = words(addressedTo: mine, in: text) else { return nil }
            let slashed = slashed(rest)
            guard !slashed.isEmpty, slashed != "/" else { return Command(line: "/help", address: address, key: key) }
            return Command(line: CommandTable.lineAfterMention(slashed), address: address, key: key)
        }
        // Carbons and messages from the relay's own account are not commands.
        if let me, from.bare == me.bare { return nil }
        let rest = slashed(text)
        guard rest != "/" else { return nil }
        let isRoomPrivate = nick(from.bare.description) != nil
        let address = XMPPAddress(
            room: nil, from: from.description, nick: isRoomPrivate ? (from.resource ?? from.description) : (from.local ?? from.domain),
            replyTo: id, corrections: false)
        return Command(line: CommandTable.lineAfterMention(rest), address: address, key: id.map { "\(from)|\($0)" })
    }

    /// `!word …` as `/word …`, so a typo of a command is answered as one (`lineAfterMention`).
    static func slashed(_ text: String) -> String {
        text.hasPrefix(BangCommands.prefix) ? "/" + text.dropFirst() : text
    }

    /// What follows `Nick:` or `Nick,` (any case) at the start of `text`, or `Nick` alone (an
    /// empty string); nil when it does not start so.
    static func words(addressedTo nick: String, in text: String) -> String? {
        guard text.count >= nick.count, text.prefix(nick.count).lowercased() == nick.lowercased() else { return nil }
        let after = text.dropFirst(nick.count)
        guard let mark = after.first else { return "" }
        guard mark == ":" || mark == "," else { return nil }
        return after.dropFirst().trimmingCharacters(in: .whitespaces)
    }

    /// Reads one message and, when it is a command, hands it to the inbox.
    func receive(_ message: XMLElement, link: XMPPLink) async {
        guard var command = Self.command(in: message, me: link.bound, nick: link.nick(in:), roomCorrections: roomCorrections) else { return }
        if command.address.room == nil {
            command.address.corrections = await clients.readsCorrections(command.address.from, link: link)
        }
        await submit(command)
    }

    /// Hands a command to the inbox; a relay too busy to take it says so.
    func submit(_ command: Command) async {
        let address = command.address
        let event = Event(
            platform: XMPPPlatform.name, team: address.team, channel: address.room ?? address.person, user: address.person,
            userName: address.nick, text: command.line, eventKey: command.key)
        do {
            let submission = try await inbox.submit(event, route: address.route)
            if let busy = submission.busyMessage { try? await inbox.post(.error(busy), route: address.route) }
        } catch {
            logger.error("xmpp: could not accept a command", metadata: ["error": "\(error)"])
            try? await inbox.post(.error("Rhea Relay could not take that command just now. Please send it again."), route: address.route)
        }
    }
}

/// Which people's clients read Last Message Correction (XEP-0308 §2: a client that does says
/// so in its service discovery): asked once per client (full JID), 5 s at most, remembered for
/// the latest 1 000. A client that does not answer in time gets whole answers.
final class CorrectingClients: Sendable {
    private let known = Mutex<[String: Bool]>([:])

    func readsCorrections(_ client: String, link: XMPPLink) async -> Bool {
        if let answer = known.withLock({ $0[client] }) { return answer }
        let answer = await link.query { id in
            XMPPSessionState.iq("get", id: id, to: client, children: [XMLElement(name: "query", namespace: XMPPNamespace.discoInfo)])
        }
        let reads =
            answer.map { answer in
                answer[attribute: "type"] == "result"
                    && (answer.child("query", namespace: XMPPNamespace.discoInfo)?.children.contains {
                        $0.name == "feature" && $0[attribute: "var"] == XMPPNamespace.correction
                    } ?? false)
            } ?? false
        known.withLock { known in
            if known.count >= 1_000 { known.removeAll() }
            known[client] = reads
        }
        return reads
    }
}
