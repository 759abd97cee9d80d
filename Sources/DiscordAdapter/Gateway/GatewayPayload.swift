public import RelayCore

/// One gateway frame the client sends: `{"op":…,"d":…,"s":…,"t":…}`. Received frames are read
/// straight into what they mean (`GatewayMessage.read`).
public struct GatewayFrame: Sendable, Hashable {
    /// The opcode (`GatewayOpcode`).
    public var op: Int
    /// The payload, `null` when absent.
    public var data: JSONValue
    /// The sequence number of a dispatch (op 0), used to resume and in heartbeats.
    public var sequence: Int?
    /// The event name of a dispatch (`MESSAGE_CREATE`…).
    public var eventName: String?

    /// The longest event name kept; Discord's are well under it.
    static let eventNameLimit = 64
    /// The largest sequence number taken: JSON numbers above 2⁵³ are not exact anyway.
    static let sequenceRange = 0...(1 << 53)

    public init(op: Int, data: JSONValue = .null, sequence: Int? = nil, eventName: String? = nil) {
        self.op = op
        self.data = data
        self.sequence = sequence
        self.eventName = eventName
    }

    /// The frame as JSON (`s` and `t` as `null` when absent, as Discord writes them).
    public var json: JSONValue {
        ["op": .int(op), "d": data, "s": sequence.map(JSONValue.int) ?? .null, "t": eventName.map(JSONValue.string) ?? .null]
    }

    /// Compact JSON bytes, ready for a text frame.
    public func encoded() -> [UInt8] { json.encoded() }
}

/// The gateway opcodes this adapter sends or understands.
public enum GatewayOpcode {
    public static let dispatch = 0
    public static let heartbeat = 1
    public static let identify = 2
    public static let resume = 6
    public static let reconnect = 7
    public static let invalidSession = 9
    public static let hello = 10
    public static let heartbeatACK = 11
}

/// What a received frame means to the connection's lifecycle.
public enum GatewayMessage: Sendable, Hashable {
    /// op 10: heartbeat at this interval (clamped, see `heartbeatIntervalRange`).
    case hello(heartbeatInterval: Duration)
    /// op 11: the last heartbeat arrived.
    case heartbeatACK
    /// op 1 from the server: send a heartbeat now.
    case heartbeatRequest
    /// op 7: reconnect and resume.
    case reconnect
    /// op 9: the session is gone; `resumable` (`d: true`) says a RESUME may still work.
    case invalidSession(resumable: Bool)
    /// op 0: an event.
    case dispatch(GatewayDispatch)
    /// Any other opcode (nothing a bot receives today).
    case other(op: Int)

    /// Heartbeat intervals taken from HELLO: Discord sends 41 250 ms. A zero would beat in a
    /// tight loop and a huge one would never notice a dead connection.
    public static let heartbeatIntervalRange: ClosedRange<Duration> = .seconds(1)...(.seconds(600))
    /// Used when HELLO carries no usable interval.
    public static let defaultHeartbeatInterval: Duration = .milliseconds(41_250)

    /// Reads a received text frame: what is not a JSON object with an integer `op` in 0…255
    /// is a `PayloadProblem` (the client logs and counts it, and reads on). A dispatch's data is
    /// decoded here, into the event's own model, when the relay acts on the event.
    public static func read(_ bytes: some Collection<UInt8>) throws(PayloadProblem) -> GatewayMessage {
        try PayloadDecoding.json(ReceivedFrame.self, from: bytes, as: "Discord gateway frame").message
    }

    /// `read`, or nil when the bytes are not a gateway frame.
    public static func decode(_ bytes: some Collection<UInt8>) -> GatewayMessage? {
        try? read(bytes)
    }

    /// A received frame, decoded by its opcode.
    private struct ReceivedFrame: Decodable {
        var message: GatewayMessage

        private struct Hello: Decodable {
            var interval: Double?
            init(from decoder: any Decoder) throws {
                interval = try decoder.container(keyedBy: DiscordKey.self).lenient(Double.self, "heartbeat_interval")
            }
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: DiscordKey.self)
            let op = try container.decode(Int.self, forKey: "op")
            guard (0...255).contains(op) else { throw DecodingError.dataCorruptedError(forKey: "op", in: container, debugDescription: "not an opcode") }
            switch op {
            case GatewayOpcode.hello:
                message = .hello(heartbeatInterval: GatewayMessage.heartbeatInterval(container.lenient(Hello.self, "d")?.interval))
            case GatewayOpcode.heartbeatACK:
                message = .heartbeatACK
            case GatewayOpcode.heartbeat:
                message = .heartbeatRequest
            case GatewayOpcode.reconnect:
                message = .reconnect
            case GatewayOpcode.invalidSession:
                // Anything but a literal `true` re-identifies: the safe reading of a strange `d`.
                message = .invalidSession(resumable: container.lenient(Bool.self, "d") == true)
            case GatewayOpcode.dispatch:
                // An over-long or non-string name is not an event anyone subscribes to: kept as none.
                let name = container.text("t", limit: GatewayFrame.eventNameLimit) ?? ""
                let sequence = UntrustedNumber.checked(
                    container.lenient(Int.self, "s"), in: GatewayFrame.sequenceRange, source: "discord", field: "gateway_sequence")
                message = .dispatch(GatewayDispatch(name: name, sequence: sequence, event: GatewayEvent(name: name, in: container)))
            default:
                message = .other(op: op)
            }
        }
    }

    /// Milliseconds from HELLO, clamped into `heartbeatIntervalRange`; a missing or non-numeric
    /// value gets the default.
    static func heartbeatInterval(_ raw: Double?) -> Duration {
        let range = heartbeatIntervalRange
        let milliseconds = (range.lowerBound.seconds * 1000)...(range.upperBound.seconds * 1000)
        guard let raw else {
            UntrustedNumber.report(source: "discord", field: "heartbeat_interval", value: "absent or not a number", replacement: "default")
            return defaultHeartbeatInterval
        }
        guard let clamped = UntrustedNumber.clamped(raw, to: milliseconds, source: "discord", field: "heartbeat_interval") else {
            return defaultHeartbeatInterval
        }
        return .milliseconds(Int64(clamped.rounded()))
    }
}

/// What a dispatch carries, decoded into the event's model when the relay acts on the event.
public enum GatewayEvent: Sendable, Hashable {
    case ready(GatewayReady)
    case messageCreate(DiscordMessagePayload)
    case reactionAdd(DiscordReactionPayload)
    /// A message deleted: a command in it not yet answered is withdrawn.
    case messageDelete(DiscordMessageDeletePayload)
    /// An event the relay does not act on (`RESUMED`, `GUILD_CREATE`…): its data is not read.
    case unread
    /// An event the relay acts on whose data does not decode: the inbound side logs and counts
    /// it (`relay_inbound_dropped_total`); its sequence number still counts.
    case undecodable(PayloadProblem)

    /// The event `name`'s data, the member `d` of `frame`.
    init(name: String, in frame: KeyedDecodingContainer<DiscordKey>) {
        func read<T: Decodable>(_ type: T.Type) -> Result<T, PayloadProblem> {
            do {
                return .success(try frame.decode(type, forKey: "d"))
            } catch let error as DecodingError {
                return .failure(PayloadProblem("Discord \(name)", PayloadDecoding.describe(error)))
            } catch {
                return .failure(PayloadProblem("Discord \(name)", "unreadable (\(error))"))
            }
        }
        let result: Result<GatewayEvent, PayloadProblem>
        switch name {
        case "READY": result = read(GatewayReady.self).map(GatewayEvent.ready)
        case "MESSAGE_CREATE": result = read(DiscordMessagePayload.self).map(GatewayEvent.messageCreate)
        case "MESSAGE_REACTION_ADD": result = read(DiscordReactionPayload.self).map(GatewayEvent.reactionAdd)
        case "MESSAGE_DELETE": result = read(DiscordMessageDeletePayload.self).map(GatewayEvent.messageDelete)
        default: result = .success(.unread)
        }
        switch result {
        case .success(let event): self = event
        case .failure(let problem): self = .undecodable(problem)
        }
    }
}

/// A dispatch (op 0): an event with its name, sequence number and data.
public struct GatewayDispatch: Sendable, Hashable {
    /// `MESSAGE_CREATE`, `MESSAGE_REACTION_ADD`, `READY`…; empty when the frame had none.
    public var name: String
    public var sequence: Int?
    public var event: GatewayEvent

    public init(name: String, sequence: Int?, event: GatewayEvent) {
        self.name = name
        self.sequence = sequence
        self.event = event
    }

    /// The dispatch a frame with this name, sequence and `data` is read as (for fakes and tests).
    public init(name: String, sequence: Int?, data: JSONValue) {
        let frame = GatewayFrame(op: GatewayOpcode.dispatch, data: data, sequence: sequence, eventName: name)
        if case .dispatch(let dispatch) = GatewayMessage.decode(frame.encoded()) {
            self = dispatch
        } else {
            self.init(name: name, sequence: sequence, event: .unread)
        }
    }

    /// What READY says about the new session, or nil when this is not a usable READY.
    public var ready: GatewayReady? {
        guard case .ready(let ready) = event else { return nil }
        return ready
    }
}

/// The part of READY a connection needs to resume later.
public struct GatewayReady: Sendable, Hashable, Decodable {
    public var sessionID: String
    /// Where to resume; nil when READY named none, or one this adapter will not send the token to.
    public var resumeGatewayURL: String?
    /// The bot's own user id, which mentions of the bot carry.
    public var userID: String?

    /// Reads READY's `d`; it needs a plausible `session_id`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: DiscordKey.self)
        let session = try container.decode(String.self, forKey: "session_id")
        guard (1...256).contains(session.utf8.count) else {
            throw DecodingError.dataCorruptedError(forKey: "session_id", in: container, debugDescription: "not a session id")
        }
        sessionID = session
        resumeGatewayURL = container.lenient(String.self, "resume_gateway_url").flatMap(Self.acceptedResumeURL)
        userID = container.lenient(DiscordObjectID.self, "user")?.id
    }

    /// The resume URL when it is a `wss://` URL (or `ws://` on the loopback, for local fakes):
    /// RESUME carries the token, which must not go to a plain-text or odd destination.
    static func acceptedResumeURL(_ url: String) -> String? {
        guard url.utf8.count <= 512, !url.contains(where: { $0.isWhitespace }) else { return nil }
        let lower = url.lowercased()
        if lower.hasPrefix("wss://"), lower.count > 6 { return url }
        for host in ["ws://127.0.0.1", "ws://localhost", "ws://[::1]"] {
            let rest = lower.dropFirst(host.count)
            if lower.hasPrefix(host), rest.isEmpty || rest.first == ":" || rest.first == "/" || rest.first == "?" { return url }
        }
        return nil
    }
}

/// What the client sends: the frames the state machine asks for. The token is added only when
/// the frame is built (`frame(token:)`), so actions and logs never hold it.
public enum GatewayCommand: Sendable, Hashable {
    /// op 2: start a new session.
    case identify(GatewayIdentify)
    /// op 6: continue `sessionID` after `sequence`.
    case resume(sessionID: String, sequence: Int)
    /// op 1: the last sequence number received (nil before any).
    case heartbeat(sequence: Int?)

    /// The frame to send.
    public func frame(token: DiscordToken) -> GatewayFrame {
        switch self {
        case .identify(let identify):
            var data: [String: JSONValue] = [
                "token": .string(token.secret),
                "intents": .int(identify.intents.rawValue),
                "properties": ["os": .string(identify.os), "browser": .string(identify.browser), "device": .string(identify.browser)],
            ]
            if let shard = identify.shard { data["shard"] = [.int(shard.id), .int(shard.count)] }
            return GatewayFrame(op: GatewayOpcode.identify, data: .object(data))
        case .resume(let sessionID, let sequence):
            return GatewayFrame(
                op: GatewayOpcode.resume, data: ["token": .string(token.secret), "session_id": .string(sessionID), "seq": .int(sequence)])
        case .heartbeat(let sequence):
            return GatewayFrame(op: GatewayOpcode.heartbeat, data: sequence.map(JSONValue.int) ?? .null)
        }
    }
}

/// What IDENTIFY says besides the token.
public struct GatewayIdentify: Sendable, Hashable {
    public var intents: GatewayIntents
    /// `properties.os`.
    public var os: String
    /// `properties.browser` and `properties.device`: the library's name.
    public var browser: String
    /// `[shard_id, num_shards]`, when sharding.
    public var shard: GatewayShard?

    public init(intents: GatewayIntents = .relay, os: String = "linux", browser: String = "rhea-relay", shard: GatewayShard? = nil) {
        self.intents = intents
        self.os = os
        self.browser = browser
        self.shard = shard
    }
}

/// One shard of a sharded bot: events of guilds with `(guild_id >> 22) % count == id`.
public struct GatewayShard: Sendable, Hashable {
    public var id: Int
    public var count: Int

    public init(id: Int, count: Int) {
        self.id = id
        self.count = count
    }
}

/// Gateway intents: which events Discord sends.
///
/// The relay asks for the fewest that its features need (`relay`):
/// - `guildMessages` and `directMessages`: mentions of the bot in channels, and DMs. Their
///   content arrives even without `messageContent`: Discord always shows a bot the messages
///   that mention it and its DMs.
/// - `guildMessageReactions`: the configured reaction (🔍) that fact-checks a message.
/// - `messageContent` (privileged): the text of a message someone *reacted* to, and of the other
///   messages of a thread `/summarize` reads, which are neither mentions nor DMs; without it
///   Discord hands those over empty. A bot in fewer than 100 servers enables it with one switch
///   (Developer Portal › Bot › Message Content Intent); a verified bot needs Discord's approval.
///   `relayWithoutMessageContent` drops it: mentions, DMs, slash commands and the message
///   context menus (whose payloads carry the text) still work; reactions then only work on
///   messages that mention the bot. Asking for it without enabling it closes the gateway with 4014.
/// Not asked for: `guilds` (channel and role caches the relay does not keep), presences and
/// members (privileged, unused), DM reactions and typing.
public struct GatewayIntents: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let guilds = GatewayIntents(rawValue: 1 << 0)
    public static let guildMessages = GatewayIntents(rawValue: 1 << 9)
    public static let guildMessageReactions = GatewayIntents(rawValue: 1 << 10)
    public static let directMessages = GatewayIntents(rawValue: 1 << 12)
    public static let directMessageReactions = GatewayIntents(rawValue: 1 << 13)
    /// Privileged.
    public static let messageContent = GatewayIntents(rawValue: 1 << 15)

    /// What the relay asks for by default (see the type's documentation): 38 400.
    public static let relay: GatewayIntents = [.guildMessages, .directMessages, .guildMessageReactions, .messageContent]
    /// The relay's intents without the privileged one: 5 632.
    public static let relayWithoutMessageContent: GatewayIntents = [.guildMessages, .directMessages, .guildMessageReactions]
}

/// Discord ids ("snowflakes"): decimal digits, at most 20.
enum DiscordSnowflake {
    static func isValid(_ value: String) -> Bool {
        (1...20).contains(value.utf8.count) && value.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}
