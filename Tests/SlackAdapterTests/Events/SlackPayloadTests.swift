import Hummingbird
import RelayCore
import RelayTestSupport
import SlackAdapter
import Testing

@Suite("Slack payloads: slash commands")
struct SlackSlashCommandTests {
    /// Slack's recorded form: every field Slack sends, `+` for spaces, Slack's own `&amp;`
    /// inside the percent-encoding.
    static let translateForm = Array(SlackPayloads.slashCommand().utf8)

    @Test func decodesEveryFieldOfARealisticForm() throws {
        let command = try SlackSlashCommand.decode(form: Self.translateForm)
        #expect(command.teamID == "T0001")
        #expect(command.teamDomain == "example")
        #expect(command.enterpriseID == "E0001")
        #expect(command.channelID == "C2147483705")
        #expect(command.channelName == "test")
        #expect(command.userID == "U2147483697")
        #expect(command.userName == "Steve")
        #expect(command.command == "/translate")
        #expect(command.text == "fr Good morning &amp; café at 100% <@U0AB12|ann>")
        #expect(command.responseURL == "https://hooks.slack.com/commands/1234/5678")
        #expect(command.triggerID == "13345224609.738474920.8088930838d88f008e0")
        #expect(command.apiAppID == "A123456")
    }

    @Test func becomesARelayEventWithThePlainCommandLine() throws {
        let event = try SlackSlashCommand.decode(form: Self.translateForm).relayEvent()
        #expect(event.platform == "slack")
        #expect(event.team == "T0001")
        #expect(event.channel == "C2147483705")
        #expect(event.thread == nil)
        #expect(event.user == "U2147483697")
        #expect(event.userName == "Steve")
        #expect(event.text == "/translate fr Good morning & café at 100% @ann")
        #expect(event.eventKey == "trigger:13345224609.738474920.8088930838d88f008e0")
    }

    @Test func theCatchAllStandsForItsCommandLine() {
        func line(_ command: String, _ text: String) -> String {
            SlackSlashCommand(teamID: "T1", channelID: "C1", userID: "U1", command: command, text: text).commandLine()
        }
        #expect(line("/translate", "fr hi") == "/translate fr hi")
        #expect(line("/translate", "") == "/translate")
        #expect(line("/rhea", "translate fr hi") == "/translate fr hi")
        #expect(line("/rhea", "/translate fr hi") == "/translate fr hi")
        #expect(line("/rhea", "  help  ") == "/help")
        #expect(line("/rhea", "") == "/rhea")
        #expect(line("/eli5", "black holes") == "/eli5 black holes")
        #expect(
            SlackSlashCommand(teamID: "T1", channelID: "C1", userID: "U1", command: "/ai", text: "tribunal x").commandLine(catchAll: "/ai")
                == "/tribunal x")
    }

    @Test func optionalFieldsMayBeEmptyOrAbsent() throws {
        // No text, response_url or trigger_id at all; enterprise and user name sent empty.
        let fields = SlackPayloads.slashCommandFields(command: "/help", userName: "")
            .filter { !["text", "response_url", "trigger_id"].contains($0.name) }
            .map { $0.name.hasPrefix("enterprise_") ? ($0.name, "") : $0 }
        let command = try SlackSlashCommand.decode(form: Array(SlackPayloads.formEncode(fields).utf8))
        #expect(command.text == "")
        #expect(command.enterpriseID == nil)
        #expect(command.userName == nil)
        #expect(command.responseURL == nil)
        #expect(command.relayEvent().userName == "U2147483697")
        #expect(command.relayEvent().eventKey == nil)
    }

    @Test func socketModeSendsTheSameFieldsAsJSON() throws {
        let payload = SlackPayloads.slashCommandJSON(
            command: "/rhea", text: "summarize --private", responseURL: "https://hooks.slack.com/commands/T111/111/xxx")
        let command = try SlackSlashCommand.decode(json: payload.encoded())
        #expect(command.relayEvent().text == "/summarize --private")
        #expect(command.responseURL == "https://hooks.slack.com/commands/T111/111/xxx")
    }

    @Test func aBrokenFormSaysWhatIsWrong() {
        func form(_ fields: [(name: String, value: String)], then extra: String = "") -> [UInt8] {
            Array((SlackPayloads.formEncode(fields) + extra).utf8)
        }
        let fields = SlackPayloads.slashCommandFields()
        let missing = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: form(fields.filter { $0.name != "channel_id" }))
        }
        #expect(missing?.description == "slash command: missing field `channel_id`")
        #expect(missing?.status == .badRequest)

        let empty = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: form(SlackPayloads.slashCommandFields(team: "")))
        }
        #expect(empty?.problem == "field `team_id` is null or empty")

        let badEscape = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: form(fields.filter { $0.name != "text" }, then: "&text=100%ZZ"))
        }
        #expect(badEscape?.problem == "a key or value is not valid percent-encoding")

        let twice = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: form(fields, then: "&text=b"))
        }
        #expect(twice?.problem == "field `text` appears more than once")

        let notText = #expect(throws: SlackPayloadError.self) { try SlackSlashCommand.decode(form: [0xFF, 0xFE]) }
        #expect(notText?.problem == "the form body is not UTF-8")
        let cut = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: form(fields.filter { $0.name != "text" }, then: "&text=caf%C3"))
        }
        #expect(cut?.problem == "a key or value is not valid percent-encoding")
        // `+` is a space and `%2B` a plus; a field without `=` is empty.
        let plus = try? SlackSlashCommand.decode(
            form: form(fields.filter { $0.name != "text" && $0.name != "trigger_id" }, then: "&text=1+%2B+1%3D2&trigger_id"))
        #expect(plus?.text == "1 + 1=2")
        #expect(plus?.triggerID == nil)
    }
}

@Suite("Slack payloads: Events API")
struct SlackEventsTests {
    func decode(_ json: String) throws -> SlackEventsRequest {
        try SlackEventsRequest.decode(Array(json.utf8))
    }

    func decode(_ json: JSONValue) throws -> SlackEventsRequest {
        try SlackEventsRequest.decode(json.encoded())
    }

    func decodeCallback(_ json: JSONValue) throws -> SlackEventCallback {
        guard case .eventCallback(let callback) = try decode(json) else {
            Issue.record("not an event_callback")
            throw CancellationError()
        }
        return callback
    }

    @Test func theURLVerificationHandshake() throws {
        #expect(try decode(SlackPayloads.urlVerification()) == .urlVerification(challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"))
        #expect(try decode(SlackPayloads.urlVerification(challenge: "abc")) == .urlVerification(challenge: "abc"))
        #expect(SlackAck.challenge("3eZb").encoded() == Array(#"{"challenge":"3eZb"}"#.utf8))
    }

    @Test func aMentionIsAnsweredInItsThreadWithoutTheBotMention() throws {
        let callback = try decodeCallback(SlackPayloads.appMention())
        #expect(callback.eventID == "Ev0LAN670R")
        #expect(callback.botUserID == "U0LAN0Z89")
        guard case .mention(let message) = callback.event else {
            Issue.record("expected a mention, got \(callback.event)")
            return
        }
        #expect(message.channel == "C0LAN2Q65")
        let event = try #require(callback.relayEvent())
        #expect(event.platform == "slack")
        #expect(event.team == "T061EG9R6")
        #expect(event.channel == "C0LAN2Q65")
        #expect(event.thread == "1515449522.000016")
        #expect(event.user == "U061F7AUR")
        #expect(event.text == "translate fr is it <everything> a river & a stream (https://example.com/river) should be?")
        #expect(event.eventKey == "Ev0LAN670R")
    }

    @Test func aMentionInsideAThreadKeepsThatThread() throws {
        let event = try #require(
            try decodeCallback(
                SlackPayloads.appMention(
                    text: "<@U0LAN0Z89> tribunal", user: "U1", channel: "C1", ts: "1700000050.000200", threadTS: "1700000000.000100")
            ).relayEvent())
        #expect(event.thread == "1700000000.000100")
        #expect(event.text == "tribunal")
    }

    @Test func aDirectMessageIsAnsweredWhereItWasWritten() throws {
        let callback = try decodeCallback(SlackPayloads.directMessage(eventID: "Ev0DM0001"))
        guard case .directMessage = callback.event else {
            Issue.record("expected a DM, got \(callback.event)")
            return
        }
        let event = try #require(callback.relayEvent())
        #expect(event.channel == "D024BE91L")
        #expect(event.thread == nil)
        #expect(event.text == "summarize <this> &amp; that")
        #expect(event.eventKey == "Ev0DM0001")
    }

    @Test func botMessagesEditsAndChannelChatterAreIgnored() throws {
        let dm = try #require(SlackPayloads.directMessage()["event"])
        let mention = try #require(SlackPayloads.appMention()["event"])
        let reaction = try #require(SlackPayloads.reactionAdded()["event"])
        let ignored: [JSONValue] = [
            // The bot's own reply in a DM: never answer yourself.
            dm.replacing(["subtype": "bot_message", "bot_id": "B0BOT", "user": nil]),
            // Apps posting with a bot token: bot_id and a user, no subtype.
            dm.replacing(["bot_id": "B0BOT", "app_id": "A0MDYCDME", "user": "U0LAN0Z89"]),
            mention.replacing(["bot_id": "B0OTHER", "user": "U0OTHER"]),
            dm.replacing(["subtype": "message_changed", "hidden": true, "message": ["type": "message", "user": "U1", "text": "new"]]),
            dm.replacing(["channel": "C0LAN2Q65", "channel_type": "channel"]),
            // A mention in a DM also arrives as the DM itself.
            mention.replacing(["channel": "D024BE91L"]),
            reaction.replacing(["item": ["type": "file", "file": "F0HS27V1Z"]]),
            // Unhandled types may give the same fields other shapes: a team_join's user is an object.
            ["type": "team_join", "user": ["id": "U9", "team_id": "T061EG9R6"], "event_ts": "1360782804.083113"],
        ]
        for event in ignored {
            let callback = try decodeCallback(SlackPayloads.eventCallback(event: event))
            guard case .ignored(_, let reason) = callback.event else {
                Issue.record("not ignored: \(event)")
                continue
            }
            #expect(!reason.isEmpty)
            #expect(callback.relayEvent() == nil)
        }
    }

    @Test func aReactionBecomesATribunalOnTheMessage() throws {
        let callback = try decodeCallback(SlackPayloads.reactionAdded(eventID: "Ev0REACT1"))
        guard case .reactionAdded(let reaction) = callback.event else {
            Issue.record("expected a reaction, got \(callback.event)")
            return
        }
        #expect(reaction == SlackReactionEvent(user: "U024BE7LH", reaction: "mag", channel: "C0G9QF9GZ", messageTS: "1360782400.498405", itemUser: "U0G9QF9C6"))
        #expect(reaction.isReaction(SlackConfiguration().tribunalReaction))
        #expect(SlackReactionEvent(user: "U1", reaction: "thumbsup::skin-tone-3", channel: "C1", messageTS: "1.1").isReaction("thumbsup"))
        #expect(!reaction.isReaction("eyes"))
        #expect(callback.relayEvent() == nil)

        let event = reaction.relayEvent(
            team: callback.teamID, eventID: callback.eventID, messageText: "The Eiffel Tower is in &lt;Berlin&gt;", messageThreadTS: "1360782000.000001")
        #expect(event.text == "/tribunal")
        #expect(event.repliedTo == "The Eiffel Tower is in <Berlin>")
        #expect(event.thread == "1360782000.000001")
        #expect(event.user == "U024BE7LH")
        #expect(event.eventKey == "Ev0REACT1")
        #expect(reaction.relayEvent(team: "T1", eventID: nil, messageText: "x").thread == "1360782400.498405")
    }

    @Test func otherEnvelopesAreAcknowledgedAndIgnored() throws {
        #expect(try decode(SlackPayloads.appRateLimited()) == .other(type: "app_rate_limited"))
    }

    @Test func malformedBodiesSayWhatIsWrong() throws {
        let mention = SlackPayloads.appMention()
        let mentionEvent = try #require(mention["event"])
        let reactionEvent = try #require(SlackPayloads.reactionAdded()["event"])
        let dmEvent = try #require(SlackPayloads.directMessage()["event"])
        let cases: [(JSONValue, String)] = [
            (SlackPayloads.urlVerification().replacing(["type": nil]), "Events API body: missing field `type`"),
            (SlackPayloads.urlVerification().replacing(["type": 5]), "Events API body: field `type` is not a string"),
            (SlackPayloads.urlVerification().replacing(["challenge": nil]), "Events API body: missing field `challenge`"),
            (mention.replacing(["event_id": nil]), "Events API body: missing field `event_id`"),
            (mention.replacing(["event": nil]), "Events API body: missing field `event`"),
            (SlackPayloads.eventCallback(event: mentionEvent.replacing(["channel": nil])), "Events API body: missing field `event.channel`"),
            (
                SlackPayloads.eventCallback(event: reactionEvent.replacing(["item": ["type": "message", "channel": "C0G9QF9GZ"]])),
                "Events API body: missing field `event.item.ts`"
            ),
            (SlackPayloads.eventCallback(event: dmEvent.replacing(["ts": 1.5])), "Events API body: field `event.ts` is not a string"),
        ]
        for (body, message) in cases {
            let error = #expect(throws: SlackPayloadError.self) { try decode(body) }
            #expect(error?.description == message, "\(body)")
        }
        let garbage = #expect(throws: SlackPayloadError.self) { try decode("not json") }
        #expect(garbage?.description == "Events API body: not valid JSON")
    }
}

@Suite("Slack payloads: interactivity")
struct SlackInteractionTests {
    /// As Slack POSTs it: one form field, `payload`, holding the JSON.
    static func form(_ payload: JSONValue) -> [UInt8] {
        Array(SlackPayloads.interactionForm(payload).utf8)
    }

    func blockActions(_ payload: JSONValue) throws -> SlackBlockActions {
        guard case .blockActions(let actions) = try SlackInteraction.decode(form: Self.form(payload)) else {
            Issue.record("not block_actions")
            throw CancellationError()
        }
        return actions
    }

    @Test func runAgainRunsTheCommandLineInTheSameThread() throws {
        let actions = try blockActions(SlackPayloads.blockActions())
        #expect(actions.teamID == "T3MDE")
        #expect(actions.userID == "U0CA5")
        #expect(actions.channelID == "C0CA5")
        #expect(actions.messageTS == "1548261231.000200")
        #expect(actions.threadTS == "1548261000.000100")
        #expect(actions.responseURL == "https://hooks.slack.com/actions/AABA1ABCD/1232321423432/D09sSasdasdAS9091209")
        #expect(!actions.isEphemeral)
        #expect(actions.buttons == [.runAgain(commandLine: "/translate fr Good morning & more")])
        let event = try #require(actions.relayEvent(runAgain: "/translate fr Good morning & more"))
        #expect(event.platform == "slack")
        #expect(event.team == "T3MDE")
        #expect(event.channel == "C0CA5")
        #expect(event.thread == "1548261000.000100")
        #expect(event.user == "U0CA5")
        #expect(event.userName == "amy")
        #expect(event.text == "/translate fr Good morning & more")
        #expect(event.eventKey == "trigger:12466734323.1395872398")
    }

    @Test func postToChannelFromAnEphemeralMessage() throws {
        let actions = try blockActions(SlackPayloads.blockActions(ephemeral: true))
        #expect(actions.isEphemeral)
        #expect(actions.messageTS == "1548261299.000300")
        #expect(actions.threadTS == nil)
        #expect(actions.buttons == [.postToChannel(id: "outbox-42")])
    }

    @Test func unknownElementsAndOtherInteractions() throws {
        let select = SlackPayloads.blockActions(actionID: "pick")
        #expect(try blockActions(select).buttons == [.other(actionID: "pick", value: "/translate fr Good morning & more")])
        #expect(try SlackInteraction.decode(form: Self.form(SlackPayloads.shortcut())) == .other(type: "shortcut"))
    }

    @Test func malformedInteractionsSayWhatIsWrong() {
        let cases: [([UInt8], String)] = [
            (Array("token=x".utf8), "interactivity body: missing field `payload`"),
            (Array("payload=%7Bnope".utf8), "interactivity body: not valid JSON"),
            (Self.form(SlackPayloads.blockActions().replacing(["user": nil])), "interactivity body: missing field `user`"),
            (Self.form(SlackPayloads.blockActions().replacing(["actions": []])), "interactivity body: missing field `actions`"),
            (Self.form(SlackPayloads.blockActions().replacing(["actions": [["value": "v"]]])), "interactivity body: missing field `actions[0].action_id`"),
        ]
        for (body, message) in cases {
            let error = #expect(throws: SlackPayloadError.self) { try SlackInteraction.decode(form: body) }
            #expect(error?.description == message)
        }
    }
}

extension JSONValue {
    /// This object with the given members set, or removed where the value is nil: a recorded
    /// payload with one thing changed or wrong.
    func replacing(_ changes: [String: JSONValue?]) -> JSONValue {
        var object = objectValue ?? [:]
        for (key, value) in changes {
            object[key] = value
        }
        return .object(object)
    }
}
