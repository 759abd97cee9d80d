import Foundation
import RelayCore
import Synchronization

/// The events whose HTTP request is still waiting for its answer on this replica, so that a
/// reply ready in time goes back in the event's own answer — no Chat API call, no token, nothing
/// to pace — as Google Chat lets an app answer (it waits 30 s).
///
/// The route opens a slot before it submits the event and waits on it for `window`; the
/// deliverer, sending the run's first and only part, hands the message to the slot
/// (`hand`) — taken only while the request still waits, else the deliverer posts through the
/// API as usual. Anything the run posts through the API first (its progress, an answer being
/// written) closes the slot: the answer will be an edit of that message, so the request is
/// answered `{}` at once. A slot is one request's, on one replica: after a restart, or on
/// another replica, there is none and every reply goes through the API.
public final class GoogleChatEventAnswers: Sendable {
    /// What the deliverer hands over: the message, and the outbox entry it delivers.
    struct Handed: Sendable {
        let body: JSONValue
        let entryID: String
    }

    private enum Slot {
        case open(CheckedContinuation<Handed?, Never>?)
        case handed(Handed)
    }

    /// Well inside Google Chat's 30 s, so an answer handed at the last moment still reaches it.
    public static let window: Duration = .seconds(10)

    private let slots = Mutex<[String: Slot]>([:])
    let window: Duration

    init(window: Duration = GoogleChatEventAnswers.window) {
        self.window = window
    }

    /// A new slot's id.
    func open() -> String {
        let id = UUID().uuidString
        slots.withLock { $0[id] = .open(nil) }
        return id
    }

    /// The message handed to slot `id` within `window`, or nil (the answer goes through the API).
    func wait(_ id: String) async -> Handed? {
        let timer = Task {
            try? await Task.sleep(for: window)
            close(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Handed?, Never>) in
            let ready: Handed?? = slots.withLock { slots in
                switch slots[id] {
                case .handed(let handed):
                    slots[id] = nil
                    return .some(handed)
                case .open:
                    slots[id] = .open(continuation)
                    return .none
                case nil:
                    return .some(nil)
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// Gives slot `id` its answer: true when its request is still waiting and takes it.
    func hand(_ id: String, _ handed: Handed) -> Bool {
        let taken: (Bool, CheckedContinuation<Handed?, Never>?) = slots.withLock { slots in
            guard case .open(let waiting) = slots[id] else { return (false, nil) }
            if waiting == nil {
                slots[id] = .handed(handed)
            } else {
                slots[id] = nil
            }
            return (true, waiting)
        }
        taken.1?.resume(returning: handed)
        return taken.0
    }

    /// Ends slot `id` without an answer.
    func close(_ id: String) {
        let waiting: CheckedContinuation<Handed?, Never>?? = slots.withLock { slots in
            guard case .open(let waiting) = slots[id] else { return nil }
            slots[id] = nil
            return .some(waiting)
        }
        if let waiting { waiting?.resume(returning: nil) }
    }

    /// Whether slot `id`'s request still waits here.
    func isOpen(_ id: String) -> Bool {
        slots.withLock { if case .open = $0[id] { true } else { false } }
    }
}
