public import RelayCore

/// "Post to channel" on an earlier private result, as every platform whose buttons come back to
/// the relay as an event does it: only its asker may; the public post is queued under a key made
/// from the result's id, so a second click or a replayed request posts nothing more (and says
/// so); the private original is then replaced by the same result without its button, saying it
/// was posted (where the platform can edit it).
public enum PostToChannel {
    /// What came of a click.
    public enum Outcome: Sendable, Hashable {
        case posted
        case alreadyPosted
        /// The result is gone from the outbox, or is not a private result of this platform.
        case unavailable
        /// Someone other than the asker clicked.
        case notAsker

        /// What the clicker is told, when anything.
        public var answer: Reply? {
            switch self {
            case .posted: nil
            case .alreadyPosted: .info("This result was already posted to the channel.")
            case .unavailable: .error("That result is no longer available to post; run the command again.")
            case .notAsker: .error("Only the person who asked can post this result to the channel.")
            }
        }
    }

    /// Where the original result went, as its platform reads the stored address.
    public struct Original: Sendable {
        /// Who asked, as the platform names the clicker.
        public var asker: String
        /// Where the public post goes.
        public var publicRoute: ReplyRoute
        /// Where the note replacing the private original goes.
        public var noteRoute: ReplyRoute

        public init(asker: String, publicRoute: ReplyRoute, noteRoute: ReplyRoute) {
            self.asker = asker
            self.publicRoute = publicRoute
            self.noteRoute = noteRoute
        }
    }

    /// Posts the private result `entryID` of `platform` for everyone, when `clicker` asked it.
    public static func post(
        entryID: String, platform: String, clicker: String, inbox: any RelayInbox, original read: (OutboxEntry) -> Original?
    ) async throws -> Outcome {
        guard let entry = try await inbox.outboxEntry(id: entryID), entry.platform == platform, case .reply(let original) = entry.content,
            original.isPrivate, let place = read(entry)
        else {
            return .unavailable
        }
        guard place.asker == clicker else { return .notAsker }
        var reply = original
        reply.isPrivate = false
        reply.actions = reply.actions.filter { $0 != .postToChannel }
        guard try await inbox.post(reply, route: place.publicRoute, onceAs: "\(entryID):posted", replacing: nil) else { return .alreadyPosted }
        var note = original
        note.actions = reply.actions
        note.notes.append("You posted this to the channel.")
        try await inbox.post(note, route: place.noteRoute, onceAs: "\(entryID):posted-note", replacing: entryID)
        return .posted
    }
}
