public import RelayCore

/// The server's `RelayInbox`: runs go to the dispatcher, ready replies straight to the outbox.
public struct Inbox: RelayInbox {
    let dispatcher: RunDispatcher
    let outbox: Outbox

    public init(dispatcher: RunDispatcher, outbox: Outbox) {
        self.dispatcher = dispatcher
        self.outbox = outbox
    }

    @discardableResult
    public func submit(_ event: Event, route: ReplyRoute) async throws -> Submission {
        try await dispatcher.submit(event, route: route)
    }

    @discardableResult
    public func post(_ reply: Reply, route: ReplyRoute, onceAs key: String?, replacing: String?) async throws -> Bool {
        var entry = outbox.entry(
            platform: route.platform, conversation: route.conversation, address: route.address, content: .reply(reply), replaces: replacing)
        guard let key else {
            try await outbox.enqueue(entry)
            return true
        }
        // The key is the entry's id, and the store refuses a second entry with an id it holds:
        // two clicks racing each other still queue one reply.
        entry.id = "once:" + key
        if try await outbox.store.outboxEntry(id: entry.id) != nil { return false }
        do {
            try await outbox.enqueue(entry)
            return true
        } catch {
            if (try? await outbox.store.outboxEntry(id: entry.id)) != nil { return false }
            throw error
        }
    }

    public func outboxEntry(id: String) async throws -> OutboxEntry? {
        try await outbox.store.outboxEntry(id: id)
    }

    /// Only the quick actions whose answer is text to insert: a translation, a fix, a rewrite.
    public func answerNow(_ event: Event) async -> Reply? {
        guard let command = try? CommandParser().parse(event.text) else { return nil }
        switch command.kind {
        case .translate, .action(.grammar), .action(.rewrite): return await dispatcher.relay.handle(event)
        default: return nil
        }
    }
}
