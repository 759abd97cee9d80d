public import RelayCore

/// The server's `RelayInbox`: runs go to the dispatcher, ready replies straight to the outbox.
public struct Inbox: RelayInbox {
    let dispatcher: RunDispatcher
    let outbox: Outbox

    public init(dispatcher: RunDispatcher, outbox: Outbox) {
        self.dispatcher = dispatcher
        self.outbox = outbox
    }

    public func submit(_ event: Event, route: ReplyRoute) async {
        await dispatcher.submit(event, route: route)
    }

    public func post(_ reply: Reply, route: ReplyRoute) async throws {
        try await outbox.enqueue(outbox.entry(platform: route.platform, conversation: route.conversation, address: route.address, content: .reply(reply)))
    }

    public func outboxEntry(id: String) async throws -> OutboxEntry? {
        try await outbox.store.outboxEntry(id: id)
    }
}
