import Foundation
import RelayPipeline

/// The outbox asks before it starts a delivery whether Telegram's limits let the message go now
/// (`TelegramRateLimiter.takeTurnIfNow`): if so the instant is booked then, and the send takes
/// it without waiting; a message that must wait stays in the outbox's queue, holding no
/// delivery slot, and nothing is booked for it.
extension TelegramDelivery {
    func platformWait(now: Date) -> Duration {
        limiter?.overallWait(now: now) ?? .zero
    }

    func takeTurn(for entry: OutboxEntry, now: Date) -> Duration {
        guard let limiter, let address = TelegramAddress.decode(entry.address) else { return .zero }
        return limiter.takeTurnIfNow(chat: Self.pacedChat(of: entry, address: address), now: now)
    }

    /// The chat the entry's next message goes to: a private result of a group's command goes to
    /// the asker's own chat (its later parts too); everything else to the command's chat.
    static func pacedChat(of entry: OutboxEntry, address: TelegramAddress) -> Int64 {
        guard case .reply(let reply) = entry.content else { return address.chat }
        return address.target(for: reply)
    }
}
