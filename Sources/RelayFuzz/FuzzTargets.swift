import Foundation
import MattermostAdapter
import RelayCore
import RelayPipeline
import RelayTestSupport
import RelayTribunal
import RheaAPI
import SlackAdapter

/// Every decoder of an inbound payload or a backend answer, with the seeds its inputs are
/// mutated from. Each runs the calls production makes on an untrusted body: decode, then map to
/// what the relay uses (an `Event`, a `QuickResult`, a `ConsensusResult`…).
public enum FuzzTargets {
    public static let all: [FuzzTarget] = slack + mattermost + rhea + council + rheaAPI + [outbox]

    /// The targets named in `names` (all when empty); nil names the first unknown one.
    public static func select(_ names: [String]) -> Result<[FuzzTarget], UnknownTarget> {
        guard !names.isEmpty else { return .success(all) }
        var chosen: [FuzzTarget] = []
        for name in names {
            guard let target = all.first(where: { $0.name == name }) else { return .failure(UnknownTarget(name: name)) }
            chosen.append(target)
        }
        return .success(chosen)
    }

    public struct UnknownTarget: Error, CustomStringConvertible {
        public var name: String
        public var description: String {
            "unknown fuzz target \"\(name)\"; known: \(FuzzTargets.all.map(\.name).joined(separator: ", "))"
        }
    }

    // MARK: Mattermost

    static let mattermost: [FuzzTarget] = [
        FuzzTarget(
            name: "mattermost.slash-command", summary: "HTTP slash command: the form's fields, the command, then its relay event",
            seeds: [
                "channel_id=c1&channel_name=town-square&command=%2Ftranslate&response_url=https%3A%2F%2Fchat.example.com%2Fhooks%2Fcommands%2Fh1"
                    + "&team_domain=crew&team_id=t1&text=fr+Good+morning&token=tok&trigger_id=tr1&user_id=u1&user_name=alice",
                "channel_id=c1&command=%2Frhea&team_id=t1&text=tribunal+%3C%21channel%3E+%40all+%E2%80%AE&user_id=u1&token=t%26k",
            ].map { Array($0.utf8) },
            run: { body in
                guard let form = try? MattermostCommandForm.decode(body), let command = try? MattermostSlashCommand(form: form) else { return false }
                _ = command.relayEvent()
                return true
            }),
        FuzzTarget(
            name: "mattermost.websocket", summary: "A websocket frame after hello: posted and reaction_added, whose payloads are JSON strings",
            seeds: [
                #"{"event":"posted","data":{"channel_type":"O","team_id":"t1","post":"{\"id\":\"p1\",\"user_id\":\"u1\",\"channel_id\":\"c1\",\"root_id\":\"\",\"message\":\"@rhea translate fr hi\"}"},"seq":1}"#,
                #"{"event":"reaction_added","data":{"reaction":"{\"user_id\":\"u1\",\"post_id\":\"p1\",\"emoji_name\":\"mag\",\"create_at\":1}"},"broadcast":{"channel_id":"c1"},"seq":2}"#,
                #"{"status":"FAIL","seq_reply":1,"error":{"id":"api.web_socket_router.not_authenticated.app_error"}}"#,
            ].map { Array($0.utf8) },
            run: { body in
                var session = MattermostSocketSession()
                _ = session.receive(#"{"event":"hello","data":{},"seq":0}"#)
                guard case .event(let event) = session.receive(String(decoding: body, as: UTF8.self)) else { return false }
                if case .posted(let post, _, _) = event { _ = MattermostRenderer.render(Reply(kind: .result, title: post.userID, body: post.message)) }
                return true
            }),
    ]

    // MARK: Slack

    static let slack: [FuzzTarget] = [
        FuzzTarget(
            name: "slack.slash-command", summary: "HTTP slash command: the form body, then its relay event",
            seeds: [
                SlackPayloads.slashCommand(), SlackPayloads.slashCommand(text: "tribunal --k 3 The Moon is <!channel> cheese & more"),
                SlackPayloads.slashCommand(command: "/rhea", text: "run polish \u{600}<!here>"),
            ].map { Array($0.utf8) },
            run: { body in
                guard let command = try? SlackSlashCommand.decode(form: body) else { return false }
                _ = command.relayEvent()
                return true
            }),
        FuzzTarget(
            name: "slack.interaction", summary: "HTTP interactivity: the payload= form, its JSON, then the button's event",
            seeds: [
                SlackPayloads.interactionForm(SlackPayloads.blockActions()),
                SlackPayloads.interactionForm(SlackPayloads.blockActions(ephemeral: true, actionID: "post_to_channel")),
                SlackPayloads.interactionForm(SlackPayloads.shortcut()),
            ].map { Array($0.utf8) },
            run: { body in
                guard let interaction = try? SlackInteraction.decode(form: body) else { return false }
                if case .blockActions(let actions) = interaction {
                    for action in actions.actions { _ = actions.relayEvent(runAgain: action.value ?? "") }
                }
                return true
            }),
        FuzzTarget(
            name: "slack.events", summary: "Events API JSON: url_verification, event callbacks, then their relay events",
            seeds: [
                SlackPayloads.urlVerification(), SlackPayloads.appRateLimited(),
                SlackPayloads.appMention(text: "<@U0FAKEBOT> tribunal <https://x.y|x> &lt;b&gt;"),
                SlackPayloads.directMessage(text: "fix teh cat"), SlackPayloads.reactionAdded(),
                SlackPayloads.appMention(threadTS: "1700000000.000100"),
            ].map { Array(SlackPayloads.body($0).utf8) },
            run: { body in
                guard let request = try? SlackEventsRequest.decode(body) else { return false }
                if case .eventCallback(let callback) = request {
                    _ = callback.relayEvent()
                    if case .reactionAdded(let reaction) = callback.event {
                        _ = reaction.relayEvent(team: callback.teamID, eventID: callback.eventID, messageText: "text")
                    }
                }
                return true
            }),
        FuzzTarget(
            name: "slack.socket-mode", summary: "Socket Mode frames: hello, disconnect, envelopes, then each payload's decoder",
            seeds: [
                SlackPayloads.socketModeHello(), SlackPayloads.socketModeDisconnect(),
                SlackPayloads.socketModeEnvelope(
                    type: "events_api", payload: SlackPayloads.appMention(text: "<@U0FAKEBOT> hello"), retryAttempt: 1, retryReason: "timeout"),
                SlackPayloads.socketModeEnvelope(type: "slash_commands", payload: SlackPayloads.slashCommandJSON(text: "explain")),
                SlackPayloads.socketModeEnvelope(type: "interactive", payload: SlackPayloads.blockActions()),
            ].map { Array(SlackPayloads.body($0).utf8) },
            run: { body in
                guard let text = String(validating: body, as: UTF8.self), let message = SocketModeMessage(text: text) else { return false }
                guard case .envelope(let envelope) = message else { return true }
                // As SlackSocketModeHandler does it.
                let payload = envelope.payload.encoded()
                _ = envelope.acknowledgement(payload: ["text": "ok"])
                switch envelope.type {
                case .slashCommands: _ = (try? SlackSlashCommand.decode(json: payload))?.relayEvent()
                case .eventsAPI:
                    if case .eventCallback(let callback)? = try? SlackEventsRequest.decode(payload) { _ = callback.relayEvent() }
                case .interactive: _ = try? SlackInteraction.decode(json: payload)
                case .other: break
                }
                return true
            }),
    ]

    // MARK: Rhea gateway

    static let rhea: [FuzzTarget] = [
        FuzzTarget(
            name: "rhea.quick", summary: "/keyboard/quick answers", seeds: seeds("rhea-quick", "rhea-quick-error"),
            run: { (try? BackendAnswers.quick($0)) != nil }),
        FuzzTarget(
            name: "rhea.dialog", summary: "/dialog answers", seeds: seeds("rhea-dialog"),
            run: { body in
                guard let result = try? BackendAnswers.dialog(body) else { return false }
                _ = AgreementFooter(result)
                return true
            }),
        FuzzTarget(
            name: "rhea.tribunal", summary: "/tribunal answers, then the agreement footer",
            seeds: seeds("rhea-tribunal", "rhea-tribunal-failed"),
            run: { body in
                guard let result = try? BackendAnswers.tribunal(body, k: 3) else { return false }
                _ = AgreementFooter(result)
                return true
            }),
        FuzzTarget(
            name: "rhea.health", summary: "/health answers", seeds: seeds("rhea-health"),
            run: { (try? BackendAnswers.health($0)) != nil }),
    ]

    // MARK: The served Rhea API (requests from its clients)

    static let rheaAPI: [FuzzTarget] = [
        FuzzTarget(
            name: "rhea-api.quick", summary: "POST /keyboard/quick bodies, validated as the served API does",
            seeds: [
                #"{"text": "hola amigo", "action": "translate", "target_lang": "fr", "style": ""}"#,
                #"{"text": "teh cat", "action": "rewrite", "style": "formal", "tier": "balanced"}"#,
            ].map { Array($0.utf8) },
            run: { RheaAPIInputs.request($0, route: "quick") }),
        FuzzTarget(
            name: "rhea-api.tribunal", summary: "POST /tribunal and /dialog bodies, validated as the served API does",
            seeds: [
                #"{"prompt": "Is regular exercise good for cardiovascular health?", "k": 3, "tier": "cheap", "mode": "local", "system": ""}"#,
                #"{"prompt": "x", "k": "5"}"#,
            ].map { Array($0.utf8) },
            run: { body in
                _ = RheaAPIInputs.request(body, route: "dialog")
                return RheaAPIInputs.request(body, route: "tribunal")
            }),
        // The signature is jwt-kit's to check; what follows it, the claims, is the relay's.
        FuzzTarget(
            name: "rhea-api.bearer", summary: "Authorization: Bearer token claims, read once the HS256 signature holds",
            seeds: [
                #"{"sub": "42", "exp": 1700003600}"#,
                #"{"sub": 42, "email": "ada@example.com", "role": "user", "iat": 1699999990, "nbf": 1699999990, "exp": 1700000600}"#,
            ].map { Array($0.utf8) },
            run: { RheaAPIInputs.bearerClaims($0) }),
    ]

    // MARK: Council

    static let council: [FuzzTarget] = [
        FuzzTarget(
            name: "council.chat-completion", summary: "OpenAI-compatible chat completions, then the verdict in their text",
            seeds: seeds("openai-chat-completion", "openai-chat-completion-prose", "openai-error", "openai-legacy-completion"),
            run: { BackendAnswers.chatCompletionVerdict($0) != nil }),
        FuzzTarget(
            name: "council.verdict", summary: "a model's text read as a verdict (JSON anywhere, else keywords)",
            seeds: [
                #"{"verdict": "false", "confidence": 0.95, "answer": "The Eiffel Tower is in Paris."}"#,
                "Sure! ```json\n{\"Verdict\": \"partly\", \"confidence\": \"85%\", \"reason\": \"Partly.\"}\n```",
                "I think that is not true. {note: {\"verdict\": true, \"confidence\": 1e2}}",
                "It cannot be verified.",
            ].map { Array($0.utf8) },
            run: { body in
                VerdictParser.parse(String(decoding: body, as: UTF8.self)).verdict != nil
            }),
    ]

    // MARK: Outbox

    /// The outbox's `content` column as the store decodes it (`OutboxContentCoding` is
    /// `JSONDecoder` over `OutboxEntry.Content`): a row written by an older version, or edited
    /// by hand, is read back through these conformances.
    static let outbox = FuzzTarget(
        name: "outbox.content", summary: "outbox rows' stored JSON content", seeds: outboxSeeds,
        run: { body in
            guard let content = try? JSONDecoder().decode(OutboxEntry.Content.self, from: Data(body)) else { return false }
            _ = try? JSONEncoder().encode(content)
            return true
        })

    static var outboxSeeds: [[UInt8]] {
        let result = ConsensusResult(
            answer: "No.", verdict: .false, agreement: 0.82, confidence: 0.9, answered: 3, asked: 3,
            dissent: [Dissent(model: "mini", reason: "Maybe.")], models: ["a", "b", "c"], elapsed: .milliseconds(1200))
        let contents: [OutboxEntry.Content] = [
            .reply(
                Reply(
                    kind: .result, title: "Tribunal", body: "The <!channel> & Eiffel Tower", footer: AgreementFooter(result), notes: ["a note"],
                    isPrivate: true, actions: [.postToChannel, .runAgain(commandLine: "/tribunal x")])),
            .progress(RunProgress(completed: 2, total: 5, block: "grammar")),
            .parkedRun(Event(platform: "slack", team: "T1", channel: "C1", thread: "1.2", user: "U1", text: "/fix teh", eventKey: "Ev1")),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return contents.compactMap { try? Array(encoder.encode($0)) }
    }

    /// The committed seed files `Seeds/<name>.json`.
    static func seeds(_ names: String...) -> [[UInt8]] {
        names.map { name in
            // A missing seed is a packaging mistake in this target.
            guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Seeds"),
                let data = try? Data(contentsOf: url)
            else { fatalError("RelayFuzz has no seed Seeds/\(name).json") }
            return Array(data)
        }
    }
}
