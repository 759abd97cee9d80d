import Foundation
import Hummingbird
import RelayCore
import SlackAdapter
import Testing

@Suite("Slack payloads: slash commands")
struct SlackSlashCommandTests {
    /// Shaped like Slack's: every field Slack sends, `+` for spaces, Slack's own `&amp;` inside
    /// the percent-encoding.
    static let translateForm =
        "token=gIkuvaNzQIHg97ATvDxqgjtO&team_id=T0001&team_domain=example&enterprise_id=E0001&enterprise_name=Globular+Construct+Inc&channel_id=C2147483705&channel_name=test&user_id=U2147483697&user_name=Steve&command=%2Ftranslate&text=fr+Good+morning+%26amp%3B+caf%C3%A9+at+100%25+%3C%40U0AB12%7Cann%3E&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2F1234%2F5678&trigger_id=13345224609.738474920.8088930838d88f008e0&api_app_id=A123456&is_enterprise_install=false"

    @Test func decodesEveryFieldOfARealisticForm() throws {
        let command = try SlackSlashCommand.decode(form: Array(Self.translateForm.utf8))
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
        let event = try SlackSlashCommand.decode(form: Array(Self.translateForm.utf8)).relayEvent()
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
        let command = try SlackSlashCommand.decode(
            form: Array("team_id=T1&channel_id=C1&user_id=U1&command=%2Fhelp&enterprise_id=&user_name=".utf8))
        #expect(command.text == "")
        #expect(command.enterpriseID == nil)
        #expect(command.userName == nil)
        #expect(command.responseURL == nil)
        #expect(command.relayEvent().userName == "U1")
        #expect(command.relayEvent().eventKey == nil)
    }

    @Test func socketModeSendsTheSameFieldsAsJSON() throws {
        let payload = #"""
            {"token":"bHKJ2n9AW6Ju3MjciOHfbA1b","team_id":"T111","team_domain":"maria","channel_id":"C111","channel_name":"general","user_id":"U111","user_name":"maria","command":"/rhea","text":"summarize --private","api_app_id":"A111","is_enterprise_install":"false","response_url":"https://hooks.slack.com/commands/T111/111/xxx","trigger_id":"111.222.xxx"}
            """#
        let command = try SlackSlashCommand.decode(json: Array(payload.utf8))
        #expect(command.relayEvent().text == "/summarize --private")
        #expect(command.responseURL == "https://hooks.slack.com/commands/T111/111/xxx")
    }

    @Test func aBrokenFormSaysWhatIsWrong() {
        let missing = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: Array("team_id=T1&user_id=U1&command=%2Fhelp".utf8))
        }
        #expect(missing?.description == "slash command: missing field `channel_id`")
        #expect(missing?.status == .badRequest)

        let empty = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: Array("team_id=&channel_id=C1&user_id=U1&command=%2Fhelp".utf8))
        }
        #expect(empty?.problem == "field `team_id` is null or empty")

        let badEscape = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: Array("team_id=T1&channel_id=C1&user_id=U1&command=%2Fhelp&text=100%ZZ".utf8))
        }
        #expect(badEscape?.problem == "a key or value is not valid percent-encoding")

        let twice = #expect(throws: SlackPayloadError.self) {
            try SlackSlashCommand.decode(form: Array("team_id=T1&channel_id=C1&user_id=U1&command=%2Fhelp&text=a&text=b".utf8))
        }
        #expect(twice?.problem == "field `text` appears more than once")

        #expect(throws: SlackPayloadError.self) { try SlackSlashCommand.decode(form: [0xFF, 0xFE]) }
    }
}

@Suite("Slack payloads: Events API")
struct SlackEventsTests {
    static let mention = #"""
        {
            "token": "ZZZZZZWSxiZZZ2yIvs3peJ",
            "team_id": "T061EG9R6",
            "api_app_id": "A0MDYCDME",
            "event": {
                "client_msg_id": "d5ea8d2c-2a1b-4b6a-9a5e-4e2d3c8f1f00",
                "type": "app_mention",
                "user": "U061F7AUR",
                "text": "<@U0LAN0Z89> translate fr is it &lt;everything&gt; a river &amp; <https://example.com/river|a stream> should be?",
                "ts": "1515449522.000016",
                "team": "T061EG9R6",
                "channel": "C0LAN2Q65",
                "event_ts": "1515449522.000016",
                "blocks": [{"type": "rich_text", "block_id": "x", "elements": []}]
            },
            "type": "event_callback",
            "event_id": "Ev0LAN670R",
            "event_time": 1515449522,
            "authorizations": [{"enterprise_id": null, "team_id": "T061EG9R6", "user_id": "U0LAN0Z89", "is_bot": true, "is_enterprise_install": false}],
            "is_ext_shared_channel": false,
            "event_context": "4-eyJldCI6ImFwcF9tZW50aW9uIn0"
        }
        """#

    static func callback(_ event: String, eventID: String = "Ev0000001") -> String {
        #"{"token":"x","team_id":"T061EG9R6","api_app_id":"A0MDYCDME","type":"event_callback","event_id":""# + eventID
            + #"","event_time":1515449522,"event":"# + event + "}"
    }

    func decode(_ json: String) throws -> SlackEventsRequest {
        try SlackEventsRequest.decode(Array(json.utf8))
    }

    func decodeCallback(_ json: String) throws -> SlackEventCallback {
        guard case .eventCallback(let callback) = try decode(json) else {
            Issue.record("not an event_callback")
            throw CancellationError()
        }
        return callback
    }

    @Test func theURLVerificationHandshake() throws {
        let body = #"{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}"#
        #expect(try decode(body) == .urlVerification(challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"))
        #expect(SlackAck.challenge("3eZb").encoded() == Array(#"{"challenge":"3eZb"}"#.utf8))
    }

    @Test func aMentionIsAnsweredInItsThreadWithoutTheBotMention() throws {
        let callback = try decodeCallback(Self.mention)
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
                Self.callback(
                    #"{"type":"app_mention","user":"U1","text":"<@U0LAN0Z89> tribunal","ts":"1700000050.000200","thread_ts":"1700000000.000100","channel":"C1","event_ts":"1700000050.000200"}"#
                )
            ).relayEvent())
        #expect(event.thread == "1700000000.000100")
        #expect(event.text == "tribunal")
    }

    @Test func aDirectMessageIsAnsweredWhereItWasWritten() throws {
        let callback = try decodeCallback(
            Self.callback(
                #"{"type":"message","channel":"D024BE91L","user":"U2147483697","text":"summarize &lt;this&gt; &amp;amp; that","ts":"1355517523.000005","event_ts":"1355517523.000005","channel_type":"im"}"#,
                eventID: "Ev0DM0001"))
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
        let ignored = [
            // The bot's own reply in a DM: never answer yourself.
            #"{"type":"message","subtype":"bot_message","bot_id":"B0BOT","text":"Bonjour","channel":"D024BE91L","channel_type":"im","ts":"1.1"}"#,
            // Apps posting with a bot token: bot_id and a user, no subtype.
            #"{"type":"message","bot_id":"B0BOT","app_id":"A0MDYCDME","user":"U0LAN0Z89","text":"Bonjour","channel":"D024BE91L","channel_type":"im","ts":"1.2"}"#,
            #"{"type":"app_mention","bot_id":"B0OTHER","user":"U0OTHER","text":"<@U0LAN0Z89> hi","channel":"C1","ts":"1.3"}"#,
            #"{"type":"message","subtype":"message_changed","channel":"D024BE91L","channel_type":"im","hidden":true,"message":{"type":"message","user":"U1","text":"new"},"ts":"1.4"}"#,
            #"{"type":"message","user":"U1","text":"lunch?","channel":"C1","channel_type":"channel","ts":"1.5"}"#,
            #"{"type":"app_mention","user":"U1","text":"<@U0LAN0Z89> hi","channel":"D024BE91L","ts":"1.6"}"#,
            #"{"type":"reaction_added","user":"U1","reaction":"mag","item":{"type":"file","file":"F0HS27V1Z"},"event_ts":"1.7"}"#,
            #"{"type":"team_join","user":{"id":"U9"}}"#,
        ]
        for json in ignored {
            let callback = try decodeCallback(Self.callback(json))
            guard case .ignored(_, let reason) = callback.event else {
                Issue.record("not ignored: \(json)")
                continue
            }
            #expect(!reason.isEmpty)
            #expect(callback.relayEvent() == nil)
        }
    }

    @Test func aReactionBecomesATribunalOnTheMessage() throws {
        let callback = try decodeCallback(
            Self.callback(
                #"{"type":"reaction_added","user":"U024BE7LH","reaction":"mag","item_user":"U0G9QF9C6","item":{"type":"message","channel":"C0G9QF9GZ","ts":"1360782400.498405"},"event_ts":"1360782804.083113"}"#,
                eventID: "Ev0REACT1"))
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
        let body = #"{"token":"Jhj5dZrVaK7ZwHHjRyZWjbDl","type":"app_rate_limited","team_id":"T123456","minute_rate_limited":1518467820,"api_app_id":"A123456"}"#
        #expect(try decode(body) == .other(type: "app_rate_limited"))
    }

    @Test func malformedBodiesSayWhatIsWrong() {
        let cases: [(String, String)] = [
            ("not json", "Events API body: not valid JSON"),
            (#"{"challenge":"x"}"#, "Events API body: missing field `type`"),
            (#"{"type":5}"#, "Events API body: field `type` is not a string"),
            (#"{"type":"url_verification"}"#, "Events API body: missing field `challenge`"),
            (#"{"type":"event_callback","team_id":"T1","event":{"type":"app_mention"}}"#, "Events API body: missing field `event_id`"),
            (#"{"type":"event_callback","team_id":"T1","event_id":"Ev1"}"#, "Events API body: missing field `event`"),
            (Self.callback(#"{"type":"app_mention","user":"U1","text":"hi","ts":"1.1"}"#), "Events API body: missing field `event.channel`"),
            (Self.callback(#"{"type":"reaction_added","user":"U1","reaction":"mag","item":{"type":"message","channel":"C1"}}"#), "Events API body: missing field `event.item.ts`"),
            (Self.callback(#"{"type":"message","channel_type":"im","channel":"D1","user":"U1","ts":1.5}"#), "Events API body: field `event.ts` is not a string"),
        ]
        for (body, message) in cases {
            let error = #expect(throws: SlackPayloadError.self) { try decode(body) }
            #expect(error?.description == message, "\(body)")
        }
    }
}

@Suite("Slack payloads: interactivity")
struct SlackInteractionTests {
    static let runAgain = #"""
        {
            "type": "block_actions",
            "user": {"id": "U0CA5", "username": "amy", "name": "amy", "team_id": "T3MDE"},
            "api_app_id": "A0CA5",
            "token": "Shh_its_a_seekrit",
            "container": {"type": "message", "message_ts": "1548261231.000200", "channel_id": "C0CA5", "is_ephemeral": false, "thread_ts": "1548261000.000100"},
            "trigger_id": "12466734323.1395872398",
            "team": {"id": "T3MDE", "domain": "acme-creamery"},
            "enterprise": null,
            "is_enterprise_install": false,
            "channel": {"id": "C0CA5", "name": "general"},
            "message": {"type": "message", "user": "U0BOT", "ts": "1548261231.000200", "thread_ts": "1548261000.000100", "bot_id": "B0BOT", "text": "Bonjour", "blocks": []},
            "state": {"values": {}},
            "response_url": "https://hooks.slack.com/actions/AABA1ABCD/1232321423432/D09sSasdasdAS9091209",
            "actions": [{"action_id": "run_again", "block_id": "Zs9", "text": {"type": "plain_text", "text": "Run again", "emoji": true}, "value": "/translate fr Good morning & more", "type": "button", "action_ts": "1548426417.840180"}]
        }
        """#

    /// Ephemeral messages come back without `message`: only `container` says where.
    static let postToChannel = #"""
        {"type":"block_actions","user":{"id":"U0CA5","username":"amy","team_id":"T3MDE"},"api_app_id":"A0CA5","token":"x","container":{"type":"message","message_ts":"1548261299.000300","channel_id":"C0CA5","is_ephemeral":true},"trigger_id":"12466734323.1395872399","team":{"id":"T3MDE","domain":"acme-creamery"},"channel":{"id":"C0CA5","name":"general"},"response_url":"https://hooks.slack.com/actions/T3MDE/1/abc","actions":[{"action_id":"post_to_channel","block_id":"a1","text":{"type":"plain_text","text":"Post to channel"},"value":"outbox-42","type":"button","style":"primary","action_ts":"1548426417.9"}]}
        """#

    /// As Slack POSTs it: one form field, the JSON percent-encoded with `+` for spaces.
    static func form(_ json: String) -> [UInt8] {
        let encoded = json.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!.replacingOccurrences(of: "%20", with: "+")
        return Array(("payload=" + encoded).utf8)
    }

    func blockActions(_ json: String) throws -> SlackBlockActions {
        guard case .blockActions(let actions) = try SlackInteraction.decode(form: Self.form(json)) else {
            Issue.record("not block_actions")
            throw CancellationError()
        }
        return actions
    }

    @Test func runAgainRunsTheCommandLineInTheSameThread() throws {
        let actions = try blockActions(Self.runAgain)
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
        let actions = try blockActions(Self.postToChannel)
        #expect(actions.isEphemeral)
        #expect(actions.messageTS == "1548261299.000300")
        #expect(actions.threadTS == nil)
        #expect(actions.buttons == [.postToChannel(id: "outbox-42")])
    }

    @Test func unknownElementsAndOtherInteractions() throws {
        let select = Self.runAgain.replacingOccurrences(of: #""action_id": "run_again""#, with: #""action_id": "pick""#)
        #expect(try blockActions(select).buttons == [.other(actionID: "pick", value: "/translate fr Good morning & more")])
        let shortcut = #"{"type":"shortcut","token":"x","action_ts":"1581106241.371594","team":{"id":"T1"},"user":{"id":"U1"},"callback_id":"rhea","trigger_id":"9"}"#
        #expect(try SlackInteraction.decode(form: Self.form(shortcut)) == .other(type: "shortcut"))
    }

    @Test func malformedInteractionsSayWhatIsWrong() {
        let cases: [([UInt8], String)] = [
            (Array("token=x".utf8), "interactivity body: missing field `payload`"),
            (Array("payload=%7Bnope".utf8), "interactivity body: not valid JSON"),
            (Self.form(#"{"type":"block_actions","team":{"id":"T1"},"actions":[]}"#), "interactivity body: missing field `user`"),
            (Self.form(#"{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"actions":[]}"#), "interactivity body: missing field `actions`"),
            (Self.form(#"{"type":"block_actions","user":{"id":"U1"},"team":{"id":"T1"},"actions":[{"value":"v"}]}"#), "interactivity body: missing field `actions[0].action_id`"),
        ]
        for (body, message) in cases {
            let error = #expect(throws: SlackPayloadError.self) { try SlackInteraction.decode(form: body) }
            #expect(error?.description == message)
        }
    }
}
