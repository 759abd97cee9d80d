import Foundation
public import Logging
public import RelayCore
public import RelayPipeline

/// What the adapter does with each verified event: turn it into an `Event` and a
/// `GoogleChatAddress` and hand it to the relay's inbox. Never waits for a model.
///
/// - A slash command (`message.slashCommand`, or `APP_COMMAND`) runs the command its id names
///   (`GoogleChatCommands`), with the text after it.
/// - A message that mentions the app in a space (Google Chat sends an app no other), or any
///   message in a direct message, runs its command: `@Rhea translate fr …`, and in a direct
///   message `translate fr …` or `/translate fr …` too; other words are fact-checked
///   (`CommandTable.lineAfterMention`). The app's mention is already out of `argumentText`.
/// - A card's button ("Run again", "Post to channel") comes back as `CARD_CLICKED`.
/// - Being added to a space answers with a welcome (or runs the command it was added with).
///
/// The tenant (`Event.team`) is the space, and the person in a direct message (`dm:<user>`).
/// The dedupe key is the message's name, so an event Google Chat sends again runs once.
public struct GoogleChatInbound: Sendable {
    static let runAgainFunction = "rheaRunAgain"
    static let postToChannelFunction = "rheaPostToChannel"
    static let welcome =
        "Hi, I'm Rhea: I translate, fix, rewrite, summarize and fact-check with several AI models. Type /translate fr … or /tribunal <a claim>, or mention me with a command; /help lists them all."

    let inbox: any RelayInbox
    let logger: Logger

    public init(inbox: any RelayInbox, logger: Logger) {
        self.inbox = inbox
        self.logger = logger
    }

    /// What the route answers Google Chat.
    public enum Answer: Sendable, Hashable {
        /// 200 with this body, now (a message, or `{}`).
        case now(JSONValue)
        /// Submitted: the answer may follow in the request's answer (its slot).
        case submitted
        /// An event type Google Chat does not define: 400.
        case badRequest(String)
    }

    /// Event types the relay takes and does nothing with.
    static let ignoredTypes: Set<String> = ["REMOVED_FROM_SPACE", "WIDGET_UPDATED", "APP_HOME", "SUBMIT_FORM", "TYPE_UNSPECIFIED"]

    /// Handles `event`; a reply it submits may ride the request's answer through `slot`.
    public func event(_ event: GoogleChatEvent, slot: String?) async -> Answer {
        switch event.type {
        case "MESSAGE", "APP_COMMAND":
            return await message(event, slot: slot)
        case "ADDED_TO_SPACE":
            if event.message != nil { return await message(event, slot: slot) }
            return .now(["text": .string(Self.welcome)])
        case "CARD_CLICKED":
            return await click(event, slot: slot)
        case let type where Self.ignoredTypes.contains(type):
            return .now([:])
        default:
            return .badRequest("event type `\(Self.shown(event.type))` is not one Rhea Relay handles")
        }
    }

    // MARK: Messages

    func message(_ event: GoogleChatEvent, slot: String?) async -> Answer {
        if event.user.type == "BOT" || event.message?.sender?.type == "BOT" { return .now([:]) }
        let line: String
        switch Self.commandLine(event) {
        case .none: return .now([:])
        case .unknownCommand(let id):
            return .now([
                "text": .string(
                    "⚠️ This slash command (id \(Self.shown(id))) is not one Rhea Relay declares: the app's commands must match bots/google-chat/commands.md. Try /help."
                )
            ])
        case .line(let text): line = text
        }
        return await submit(self.event(event, text: line, sourceMessage: event.message?.name), address: address(event, slot: slot))
    }

    enum CommandLine: Equatable {
        case none
        case unknownCommand(String)
        case line(String)
    }

    /// The command line an event asks for.
    static func commandLine(_ event: GoogleChatEvent) -> CommandLine {
        let argument = (event.message?.argumentText ?? event.message?.text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        if let id = event.message?.slashCommand?.commandId ?? event.appCommandMetadata?.appCommandId {
            guard let name = GoogleChatCommands.name(id: id) else { return .unknownCommand(id) }
            return .line(argument.isEmpty ? "/\(name)" : "/\(name) \(argument)")
        }
        if argument.isEmpty { return event.space.isDirect ? .none : .line("/help") }
        return .line(CommandTable.lineAfterMention(argument))
    }

    // MARK: Buttons

    func click(_ event: GoogleChatEvent, slot: String?) async -> Answer {
        switch event.clickedFunction {
        case Self.runAgainFunction:
            guard let line = event.parameter("line"), !line.isEmpty else { return .now([:]) }
            return await submit(self.event(event, text: line, sourceMessage: nil), address: address(event, slot: slot))
        case Self.postToChannelFunction:
            guard let entryID = event.parameter("entry") else { return .now([:]) }
            let here = address(event, slot: nil)
            do {
                let outcome = try await PostToChannel.post(entryID: entryID, platform: GoogleChatPlatform.name, clicker: event.user.name, inbox: inbox) {
                    entry in
                    GoogleChatAddress.decode(entry.address).map { original in
                        var target = original
                        target.eventSlot = nil
                        return PostToChannel.Original(asker: original.user, publicRoute: target.route, noteRoute: target.route)
                    }
                }
                if let answer = outcome.answer { try await inbox.post(answer, route: here.route) }
            } catch {
                logger.error("google-chat: could not queue a post to channel", metadata: ["error": "\(error)"])
            }
            return .now([:])
        default:
            logger.notice("google-chat: a card's button the relay did not make", metadata: ["function": "\(Self.shown(event.clickedFunction ?? ""))"])
            return .now([:])
        }
    }

    // MARK: Details

    func event(_ event: GoogleChatEvent, text: String, sourceMessage: String?) -> Event {
        Event(
            platform: GoogleChatPlatform.name, team: Self.tenant(of: event), channel: event.space.name, thread: event.message?.thread?.name,
            user: event.user.name, userName: event.user.displayName, text: text, eventKey: sourceMessage.map { "message:\($0)" },
            sourceMessage: sourceMessage)
    }

    func address(_ event: GoogleChatEvent, slot: String?) -> GoogleChatAddress {
        GoogleChatAddress(
            team: Self.tenant(of: event), space: event.space.name, thread: event.message?.thread?.name, user: event.user.name,
            isDirect: event.space.isDirect, eventSlot: slot)
    }

    /// The space, or the person in a direct message with the app.
    static func tenant(of event: GoogleChatEvent) -> String {
        event.space.isDirect ? "dm:\(event.user.name)" : event.space.name
    }

    /// A name from a payload as an answer or a log shows it: letters, digits and `/ _ - .`,
    /// 64 at most.
    static func shown(_ name: String) -> String {
        String(
            String.UnicodeScalarView(
                name.unicodeScalars.filter { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "/_-.".unicodeScalars.contains($0)) }
                    .prefix(64)))
    }

    /// Submits `event`: `.submitted` when it will run (its reply may ride the request's
    /// answer); a retry already accepted is answered `{}`, and a refusal for being one too many
    /// is answered at once, in the request's answer.
    private func submit(_ event: Event, address: GoogleChatAddress) async -> Answer {
        do {
            switch try await inbox.submit(event, route: address.route) {
            case .accepted: return .submitted
            case .duplicate: return .now([:])
            case .busy(let ahead):
                return .now(["text": .string(GoogleChatText.text(Submission.busy(ahead: ahead).busyMessage ?? ""))])
            }
        } catch {
            logger.error("google-chat: could not accept an event", metadata: ["error": "\(error)"])
            return .now(["text": "⚠️ Rhea Relay could not accept this just now (it could not store it). Nothing was run; please send it again."])
        }
    }
}
