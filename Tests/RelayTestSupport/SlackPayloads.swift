import Foundation
public import RelayCore

/// Slack's inbound payloads as Slack sends them, kept under `Resources/slack/` and replayed with
/// the few fields a test varies filled in: slash commands (HTTP forms and Socket Mode JSON),
/// Events API bodies, interactivity payloads and Socket Mode frames.
///
/// A parameter left nil keeps the recorded value. Every file is read by one accessor here and
/// nowhere else, so a change of Slack's shapes is one file and one function away.
///
/// ```swift
/// let body = SlackPayloads.slashCommand(command: "/translate", text: "fr hi", responseURL: url)
/// let event = SlackPayloads.appMention(text: "<@U0FAKEBOT> fix teh cat", eventID: "Ev1")
/// ```
public enum SlackPayloads {
    // MARK: Slash commands

    /// A slash command's fields in Slack's order (`slash-command.txt`): what Slack POSTs to the
    /// command URL, before form encoding.
    public static func slashCommandFields(
        command: String? = nil, text: String? = nil, responseURL: String? = nil, team: String? = nil,
        channel: String? = nil, user: String? = nil, userName: String? = nil, triggerID: String? = nil
    ) -> [(name: String, value: String)] {
        let changes: [String: String?] = [
            "command": command, "text": text, "response_url": responseURL, "team_id": team, "channel_id": channel,
            "user_id": user, "user_name": userName, "trigger_id": triggerID,
        ]
        return formFields(resource("slash-command.txt")).map { field in
            (field.name, (changes[field.name] ?? nil) ?? field.value)
        }
    }

    /// A slash command as Slack POSTs it to `/slack/commands`: `application/x-www-form-urlencoded`.
    public static func slashCommand(
        command: String? = nil, text: String? = nil, responseURL: String? = nil, team: String? = nil,
        channel: String? = nil, user: String? = nil, userName: String? = nil, triggerID: String? = nil
    ) -> String {
        formEncode(
            slashCommandFields(
                command: command, text: text, responseURL: responseURL, team: team, channel: channel, user: user,
                userName: userName, triggerID: triggerID))
    }

    /// The same command as a Socket Mode `slash_commands` payload: the form's fields as JSON
    /// strings (`is_enterprise_install` too).
    public static func slashCommandJSON(
        command: String? = nil, text: String? = nil, responseURL: String? = nil, team: String? = nil,
        channel: String? = nil, user: String? = nil, userName: String? = nil, triggerID: String? = nil
    ) -> JSONValue {
        let fields = slashCommandFields(
            command: command, text: text, responseURL: responseURL, team: team, channel: channel, user: user,
            userName: userName, triggerID: triggerID)
        return .object(Dictionary(fields.map { ($0.name, JSONValue.string($0.value)) }, uniquingKeysWith: { _, last in last }))
    }

    /// A request with the signature Slack computed for it.
    public struct SignedRequest: Sendable, Hashable {
        public var signingSecret: String
        /// `X-Slack-Request-Timestamp`, Unix seconds.
        public var timestamp: Int
        /// `X-Slack-Signature`.
        public var signature: String
        /// The raw body, byte for byte as signed.
        public var body: String
    }

    /// Slack's worked example from "Verifying requests from Slack" (`slash-command-signed.json`):
    /// a slash command with its signing secret, timestamp and signature.
    public static func signedSlashCommand() -> SignedRequest {
        let json = object("slash-command-signed.json")
        guard let secret = json["signing_secret"]?.stringValue, let timestamp = json["timestamp"]?.intValue,
            let signature = json["signature"]?.stringValue, let body = json["body"]?.stringValue
        else { fatalError("Resources/slack/slash-command-signed.json lacks a field") }
        return SignedRequest(signingSecret: secret, timestamp: timestamp, signature: signature, body: body)
    }

    // MARK: Events API

    /// The set-up handshake (`url-verification.json`).
    public static func urlVerification(challenge: String? = nil) -> JSONValue {
        var body = object("url-verification.json")
        if let challenge { body["challenge"] = .string(challenge) }
        return .object(body)
    }

    /// An envelope that is no event: Slack's notice that it is dropping events
    /// (`app-rate-limited.json`).
    public static func appRateLimited() -> JSONValue {
        .object(object("app-rate-limited.json"))
    }

    /// An `event_callback` around `event` (`event-callback.json`).
    ///
    /// - Parameters:
    ///   - team: the workspace, in `team_id` and the bot's authorization.
    ///   - botUserID: the app's bot user, in `authorizations` (which the adapter reads to strip
    ///     the bot's own mention).
    public static func eventCallback(
        event: JSONValue, eventID: String? = nil, team: String? = nil, botUserID: String? = nil
    ) -> JSONValue {
        var body = object("event-callback.json")
        body["event"] = event
        if let eventID { body["event_id"] = .string(eventID) }
        if let team {
            body["team_id"] = .string(team)
            body["context_team_id"] = .string(team)
        }
        if var authorization = body["authorizations"]?[0]?.objectValue {
            if let team { authorization["team_id"] = .string(team) }
            if let botUserID { authorization["user_id"] = .string(botUserID) }
            body["authorizations"] = [.object(authorization)]
        }
        return .object(body)
    }

    /// `app_mention` (`event-app-mention.json`) in an `event_callback`.
    ///
    /// - Parameters:
    ///   - text: the message as Slack sends it, with the bot's `<@U…>` and Slack's escapes.
    ///   - threadTS: set when the mention was written in a thread.
    public static func appMention(
        text: String? = nil, user: String? = nil, channel: String? = nil, ts: String? = nil, threadTS: String? = nil,
        eventID: String? = nil, team: String? = nil, botUserID: String? = nil
    ) -> JSONValue {
        let event = message(
            "event-app-mention.json", text: text, user: user, channel: channel, ts: ts, threadTS: threadTS, team: team)
        return eventCallback(event: event, eventID: eventID, team: team, botUserID: botUserID)
    }

    /// A direct message to the bot, `message` with `channel_type: "im"`
    /// (`event-message-im.json`), in an `event_callback`.
    public static func directMessage(
        text: String? = nil, user: String? = nil, channel: String? = nil, ts: String? = nil, threadTS: String? = nil,
        eventID: String? = nil, team: String? = nil, botUserID: String? = nil
    ) -> JSONValue {
        let event = message(
            "event-message-im.json", text: text, user: user, channel: channel, ts: ts, threadTS: threadTS, team: team)
        return eventCallback(event: event, eventID: eventID, team: team, botUserID: botUserID)
    }

    /// `message` with subtype `message_deleted` (as Slack's "message_deleted" event reference
    /// shows it), for the message `deletedTS` in the direct message `channel`, in an
    /// `event_callback`.
    public static func messageDeleted(
        channel: String, deletedTS: String, user: String = "U0HUMAN", eventID: String? = nil, team: String? = nil, botUserID: String? = nil
    ) -> JSONValue {
        let event: JSONValue = [
            "type": "message", "subtype": "message_deleted", "hidden": true, "channel": .string(channel), "channel_type": "im",
            "ts": "1700000999.000100", "deleted_ts": .string(deletedTS), "event_ts": "1700000999.000100",
            "previous_message": ["type": "message", "user": .string(user), "text": "deleted", "ts": .string(deletedTS)],
        ]
        return eventCallback(event: event, eventID: eventID, team: team, botUserID: botUserID)
    }

    /// `reaction_added` on the message `ts` in `channel` (`event-reaction-added.json`), in an
    /// `event_callback`.
    ///
    /// - Parameters:
    ///   - reaction: the emoji name without colons.
    ///   - user: who reacted; `itemUser`: who wrote the message.
    public static func reactionAdded(
        reaction: String? = nil, user: String? = nil, channel: String? = nil, ts: String? = nil,
        itemUser: String? = nil, eventID: String? = nil, team: String? = nil, botUserID: String? = nil
    ) -> JSONValue {
        var event = object("event-reaction-added.json")
        if let reaction { event["reaction"] = .string(reaction) }
        if let user { event["user"] = .string(user) }
        if let itemUser { event["item_user"] = .string(itemUser) }
        if var item = event["item"]?.objectValue {
            if let channel { item["channel"] = .string(channel) }
            if let ts { item["ts"] = .string(ts) }
            event["item"] = .object(item)
        }
        return eventCallback(event: .object(event), eventID: eventID, team: team, botUserID: botUserID)
    }

    // MARK: Interactivity

    /// A button click, `block_actions`: on a message in a thread (`block-actions.json`), or on an
    /// ephemeral message, which Slack sends without `message` (`block-actions-ephemeral.json`).
    public static func blockActions(
        ephemeral: Bool = false, actionID: String? = nil, value: String? = nil, user: String? = nil,
        userName: String? = nil, team: String? = nil, channel: String? = nil, responseURL: String? = nil,
        triggerID: String? = nil
    ) -> JSONValue {
        var body = object(ephemeral ? "block-actions-ephemeral.json" : "block-actions.json")
        if var who = body["user"]?.objectValue {
            if let user { who["id"] = .string(user) }
            if let userName {
                who["username"] = .string(userName)
                who["name"] = .string(userName)
            }
            if let team { who["team_id"] = .string(team) }
            body["user"] = .object(who)
        }
        if let team, var workspace = body["team"]?.objectValue {
            workspace["id"] = .string(team)
            body["team"] = .object(workspace)
        }
        if let channel {
            if var place = body["channel"]?.objectValue {
                place["id"] = .string(channel)
                body["channel"] = .object(place)
            }
            if var container = body["container"]?.objectValue {
                container["channel_id"] = .string(channel)
                body["container"] = .object(container)
            }
        }
        if let responseURL { body["response_url"] = .string(responseURL) }
        if let triggerID { body["trigger_id"] = .string(triggerID) }
        if var action = body["actions"]?[0]?.objectValue {
            if let actionID { action["action_id"] = .string(actionID) }
            if let value { action["value"] = .string(value) }
            body["actions"] = [.object(action)]
        }
        return .object(body)
    }

    /// A global shortcut (`shortcut.json`): an interaction the relay acknowledges and ignores.
    public static func shortcut() -> JSONValue {
        .object(object("shortcut.json"))
    }

    /// An interactivity payload as Slack POSTs it to `/slack/interactive`: one form field,
    /// `payload`, holding the JSON.
    public static func interactionForm(_ payload: JSONValue) -> String {
        formEncode([("payload", String(decoding: payload.encoded(), as: UTF8.self))])
    }

    // MARK: Socket Mode

    /// The first frame on a Socket Mode connection (`socket-mode-hello.json`).
    public static func socketModeHello(connections: Int? = nil) -> JSONValue {
        var frame = object("socket-mode-hello.json")
        if let connections { frame["num_connections"] = .int(connections) }
        return .object(frame)
    }

    /// Slack's notice that a connection will go away (`socket-mode-disconnect.json`).
    public static func socketModeDisconnect(reason: String? = nil) -> JSONValue {
        var frame = object("socket-mode-disconnect.json")
        if let reason { frame["reason"] = .string(reason) }
        return .object(frame)
    }

    /// `payload` wrapped as Slack sends it over Socket Mode (`socket-mode-envelope.json`).
    ///
    /// - Parameters:
    ///   - type: `events_api`, `slash_commands` or `interactive`.
    ///   - acceptsResponsePayload: nil is Slack's usual: true for slash commands only.
    ///   - retryReason: nil is `timeout` on a retry, empty on a first delivery.
    public static func socketModeEnvelope(
        type: String, envelopeID: String? = nil, payload: JSONValue, retryAttempt: Int = 0, retryReason: String? = nil,
        acceptsResponsePayload: Bool? = nil
    ) -> JSONValue {
        var frame = object("socket-mode-envelope.json")
        frame["type"] = .string(type)
        if let envelopeID { frame["envelope_id"] = .string(envelopeID) }
        frame["payload"] = payload
        frame["retry_attempt"] = .int(retryAttempt)
        frame["retry_reason"] = .string(retryReason ?? (retryAttempt > 0 ? "timeout" : ""))
        frame["accepts_response_payload"] = .bool(acceptsResponsePayload ?? (type == "slash_commands"))
        return .object(frame)
    }

    // MARK: Encoding

    /// `application/x-www-form-urlencoded` as Slack writes it: ASCII letters, digits and `-._*`
    /// as they are, space as `+`, every other byte of the UTF-8 as `%XX`.
    public static func formEncode(_ fields: [(name: String, value: String)]) -> String {
        fields.map { encode($0.name) + "=" + encode($0.value) }.joined(separator: "&")
    }

    /// JSON as the bytes of a request body.
    public static func body(_ json: JSONValue) -> String {
        String(decoding: json.encoded(), as: UTF8.self)
    }

    private static let unreserved = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._*".utf8)

    private static func encode(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            if byte == UInt8(ascii: " ") {
                out += "+"
            } else if unreserved.contains(byte) {
                out.unicodeScalars.append(UnicodeScalar(byte))
            } else {
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }

    /// A form body's fields in order, `+` and `%XX` decoded.
    private static func formFields(_ body: String) -> [(name: String, value: String)] {
        body.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    // MARK: Files

    /// A message event from `file`, with the given fields replaced. A new text drops the
    /// recorded rich-text `blocks`, which would still say the old one.
    private static func message(
        _ file: String, text: String?, user: String?, channel: String?, ts: String?, threadTS: String?, team: String?
    ) -> JSONValue {
        var event = object(file)
        if let text {
            event["text"] = .string(text)
            event.removeValue(forKey: "blocks")
        }
        if let user { event["user"] = .string(user) }
        if let channel { event["channel"] = .string(channel) }
        if let ts {
            event["ts"] = .string(ts)
            event["event_ts"] = .string(ts)
        }
        if let threadTS { event["thread_ts"] = .string(threadTS) }
        if let team { event["team"] = .string(team) }
        return .object(event)
    }

    private static func object(_ file: String) -> [String: JSONValue] {
        guard let object = JSONValue.parse(Array(resource(file).utf8))?.objectValue else {
            fatalError("Resources/slack/\(file) is not a JSON object")
        }
        return object
    }

    /// The text of `Resources/slack/<name>`, without a trailing newline (no payload ends in one).
    private static func resource(_ name: String) -> String {
        // A missing resource is a packaging mistake in this target, not a test failure.
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources/slack"),
            let text = try? String(contentsOf: url, encoding: .utf8)
        else { fatalError("RelayTestSupport has no resource Resources/slack/\(name)") }
        var trimmed = Substring(text)
        while trimmed.last?.isNewline == true { trimmed = trimmed.dropLast() }
        return String(trimmed)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
