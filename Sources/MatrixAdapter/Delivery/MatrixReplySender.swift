import Logging
import RelayCore
public import RelayPipeline
import RelayPlatform

/// Delivers Matrix's outbox entries as `m.notice` messages.
///
/// Every message is sent with `PUT …/send/m.room.message/{txnId}`, the transaction id made from
/// the outbox entry, its part and what the send does (`rr.<entry>.<part>`, `….edit`, `….tidy`).
/// The homeserver keeps transaction ids per access token and answers a repeated one with the
/// event it already made, so a delivery repeated after a crash, a timeout or a lost answer
/// shows once: exactly once, for free.
///
/// A run's progress is one message, edited (`m.replace`) as blocks finish; the result replaces
/// it in the same way, so a chain leaves one message. A private result, and an error, goes to
/// the asker's direct room (`MatrixDirectRooms`), and the room's progress message says where it
/// went. A reply longer than one message goes as several, one part per delivery. Rate limits
/// (`M_LIMIT_EXCEEDED`) are handed to the outbox to wait out.
///
/// `platformRef` is `<room> <event>`: where the message is, for the edit that follows.
public struct MatrixReplySender: ReplySender {
    public let platform = MatrixPlatform.name
    let api: any MatrixAPI
    let identity: MatrixIdentity
    let rooms: MatrixDirectRooms
    let logger: Logger

    public func minimumInterval(for entry: OutboxEntry) -> Duration { .zero }

    public func deliver(_ entry: OutboxEntry, earlier: OutboxEntry?) async -> DeliveryOutcome {
        guard let address = MatrixAddress.decode(entry.address) else {
            return .rejected(reason: "the stored Matrix address cannot be read")
        }
        do throws(MatrixAPIError) {
            switch entry.content {
            case .progress(let step):
                let message = MatrixRenderer.render(step)
                if let (room, event) = Self.message(earlier) {
                    _ = try await api.send(
                        room: room, type: "m.room.message", transaction: Self.transaction(entry, "edit"), content: message.editContent(of: event))
                    return .sent(platformRef: Self.reference(room: room, event: event))
                }
                let event = try await api.send(
                    room: address.room, type: "m.room.message", transaction: Self.transaction(entry, "0"),
                    content: message.content(replyTo: address.replyTo, thread: address.thread))
                return .sent(platformRef: Self.reference(room: address.room, event: event))
            case .reply(let reply):
                return try await deliverPart(of: reply, entry: entry, address: address, earlier: earlier)
            case .parkedRun:
                return .rejected(reason: "a parked run is not a message")
            }
        } catch {
            return error.deliveryOutcome
        }
    }

    /// Sends part `entry.partsDelivered` of `reply`: `.partDelivered` while more remain, `.sent`
    /// after the last (with the first part's reference).
    private func deliverPart(of reply: Reply, entry: OutboxEntry, address: MatrixAddress, earlier: OutboxEntry?) async throws(MatrixAPIError)
        -> DeliveryOutcome
    {
        let messages = MatrixRenderer.render(reply)
        let part = entry.partsDelivered
        guard part < messages.count else { return .sent(platformRef: nil) }
        let room = try await target(of: reply, address: address)
        let inPlace = room == address.room
        var reference: String?
        if part == 0, let (earlierRoom, earlierEvent) = Self.message(earlier) {
            if earlierRoom == room {
                // The result replaces the progress message.
                _ = try await api.send(
                    room: room, type: "m.room.message", transaction: Self.transaction(entry, "edit"), content: messages[0].editContent(of: earlierEvent))
                reference = Self.reference(room: room, event: earlierEvent)
            } else {
                await tidy(room: earlierRoom, event: earlierEvent, entry: entry)
            }
        }
        if reference == nil {
            let event = try await api.send(
                room: room, type: "m.room.message", transaction: Self.transaction(entry, String(part)),
                content: messages[part].content(replyTo: part == 0 && inPlace ? address.replyTo : nil, thread: inPlace ? address.thread : nil))
            reference = Self.reference(room: room, event: event)
        }
        guard part == messages.count - 1 else { return .partDelivered(platformRef: reference) }
        // "typing…" was shown where the command was, wherever the answer went.
        if let me = await identity.current()?.user { try? await api.typing(room: address.room, user: me, on: false) }
        return .sent(platformRef: part == 0 ? reference : nil)
    }

    /// Where `reply` goes: the command's room, or for a private reply the asker's direct room
    /// (the command's room itself when it is that).
    private func target(of reply: Reply, address: MatrixAddress) async throws(MatrixAPIError) -> String {
        guard reply.isPrivate, !address.user.isEmpty else { return address.room }
        if try await rooms.isDirect(address.room, with: address.user) { return address.room }
        return try await rooms.room(with: address.user)
    }

    /// The room's progress message, when the result went privately: says so. Best effort.
    private func tidy(room: String, event: String, entry: OutboxEntry) async {
        let text = "Finished — the result was sent privately to the person who asked."
        do throws(MatrixAPIError) {
            _ = try await api.send(
                room: room, type: "m.room.message", transaction: Self.transaction(entry, "tidy"),
                content: MatrixMessage(body: text, html: text).editContent(of: event))
        } catch {
            logger.notice("matrix: could not tidy the progress of a private result", metadata: ["reason": "\(error.reason)"])
        }
    }

    /// The transaction id of one send of `entry`: the same send of the same entry, the same id.
    static func transaction(_ entry: OutboxEntry, _ step: String) -> String { "rr.\(entry.id).\(step)" }

    static func reference(room: String, event: String) -> String { room + " " + event }

    /// The room and event of the message an earlier entry left (its first part), when there is one.
    static func message(_ entry: OutboxEntry?) -> (room: String, event: String)? {
        guard let reference = entry?.platformRef else { return nil }
        let parts = reference.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        return (String(parts[0]), String(parts[1]))
    }
}
