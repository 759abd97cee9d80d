import Foundation
import Logging
import RelayCore
import RelayPipeline
import Synchronization
import Testing

/// The one deliverer over a platform's primitives: what a person sees, as the calls a platform
/// was asked to make — on a platform with edits and ephemeral messages, and on one with no edits
/// at all (IRC's shape).
@Suite("The one deliverer")
struct DelivererTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func entry(_ content: OutboxEntry.Content, id: String = "e1", parts: Int = 0, ref: String? = nil, replaces: String? = nil) -> OutboxEntry {
        OutboxEntry(
            id: id, platform: "fake", conversation: "fake:c", address: "channel", content: content, replaces: replaces, partsDelivered: parts,
            nextAttemptAt: now, createdAt: now, platformRef: ref)
    }

    static let progress = RunProgress.started("/translate")

    @Test func progressIsPostedOnceThenEdited() async {
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let first = Self.entry(.progress(Self.progress), id: "progress:1")
        #expect(await deliverer.deliver(first, earlier: nil) == .sent(platformRef: "m1"))
        var posted = first
        posted.platformRef = "m1"
        let next = Self.entry(.progress(RunProgress(completed: 1, total: 2, block: "grammar")), id: "e2", replaces: "progress:1")
        #expect(await deliverer.deliver(next, earlier: posted) == .sent(platformRef: "m1"))
        #expect(platform.calls == ["post channel [progress:1/0]: ⏳ Working on /translate…", "edit m1 [e2/edit]: ⏳ Running… 1/2 (grammar)"])
    }

    @Test func aPublicAnswerReplacesThePlaceholderAndAPrivateOneLeavesANoteInIt() async {
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let placeholder = Self.entry(.progress(Self.progress), id: "progress:1", ref: "m1")
        let answer = Self.entry(.reply(Reply(kind: .result, body: "Bonjour")), replaces: "progress:1")
        #expect(await deliverer.deliver(answer, earlier: placeholder) == .sent(platformRef: "m1"))
        let secret = Self.entry(.reply(Reply(kind: .result, body: "Bonjour", isPrivate: true)), id: "e3", replaces: "progress:1")
        #expect(await deliverer.deliver(secret, earlier: placeholder) == .sent(platformRef: nil))
        #expect(
            platform.calls == [
                "edit m1 [e1/edit]: Bonjour", "post asker [e3/0]: Bonjour",
                "edit m1 [e3/tidy]: \(Deliverer<FakeDelivery>.sentPrivately)",
            ])
    }

    /// One part per call; a retry resumes at the part that failed, never repeating one taken.
    @Test func aLongAnswerGoesOnePartPerCallAndKeepsTheFirstPartsReference() async {
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let reply = Reply(kind: .result, body: "one|two|three")
        #expect(await deliverer.deliver(Self.entry(.reply(reply)), earlier: nil) == .partDelivered(platformRef: "m1"))
        #expect(await deliverer.deliver(Self.entry(.reply(reply), parts: 1, ref: "m1"), earlier: nil) == .partDelivered(platformRef: "m2"))
        #expect(await deliverer.deliver(Self.entry(.reply(reply), parts: 2, ref: "m1"), earlier: nil) == .sent(platformRef: nil))
        #expect(platform.calls == ["post channel [e1/0]: one", "post channel [e1/1]: two", "post channel [e1/2]: three"])
    }

    @Test func aRouteRefusedForGoodHandsThePartToTheNextAndAPassingFailureStops() async {
        let platform = FakeDelivery(refusing: ["channel": .rejected(reason: "not_in_channel")])
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let reply = Reply(kind: .result, body: "Bonjour")
        #expect(await deliverer.deliver(Self.entry(.reply(reply)), earlier: nil) == .sent(platformRef: nil))
        #expect(platform.calls == ["post channel [e1/0]: refused", "post webhook [e1/0]: Bonjour"])

        let down = FakeDelivery(refusing: ["channel": .retryable(reason: "HTTP 503")])
        #expect(await Deliverer(down, logger: Logger(label: "test")).deliver(Self.entry(.reply(reply)), earlier: nil) == .retryable(reason: "HTTP 503"))
        #expect(down.calls == ["post channel [e1/0]: refused"])

        let nowhere = FakeDelivery(refusing: ["channel": .rejected(reason: "a"), "webhook": .rejected(reason: "b")])
        #expect(await Deliverer(nowhere, logger: Logger(label: "test")).deliver(Self.entry(.reply(reply)), earlier: nil) == .rejected(reason: "a; then b"))
    }

    /// "Post to channel": the note replaces the private message that holds the button.
    @Test func aPrivateReplyToAPrivateOneReplacesTheButtonsMessage() async {
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let original = Self.entry(.reply(Reply(kind: .result, body: "secret", isPrivate: true)), id: "e0")
        let note = Self.entry(.reply(Reply.info("Posted to the channel.")), replaces: "e0")
        #expect(await deliverer.deliver(note, earlier: original) == .sent(platformRef: nil))
        #expect(platform.calls == ["post clicked [e1/button]: Posted to the channel."])
    }

    /// A platform with no edits (IRC): no placeholder, no progress, every part a new message.
    @Test func aPlatformWithoutEditsPostsEachPartAndNothingElse() async {
        let platform = FakeDelivery(edits: false)
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        #expect(await deliverer.deliver(Self.entry(.progress(Self.progress), id: "progress:1"), earlier: nil) == .sent(platformRef: nil))
        let placeholder = Self.entry(.progress(Self.progress), id: "progress:1", ref: "m0")
        let reply = Reply(kind: .result, body: "one|two")
        #expect(await deliverer.deliver(Self.entry(.reply(reply), replaces: "progress:1"), earlier: placeholder) == .partDelivered(platformRef: "m1"))
        #expect(
            await deliverer.deliver(Self.entry(.reply(reply), parts: 1, ref: "m1", replaces: "progress:1"), earlier: placeholder)
                == .sent(platformRef: nil))
        #expect(platform.calls == ["post channel [e1/0]: one", "post channel [e1/1]: two"])
    }

    /// A secret (a console sign-in link) goes where the asker alone reads it; where it would be
    /// seen by others it is replaced by the reason, and it never takes the run's public
    /// placeholder, even as a fallback.
    @Test func aSecretReachesTheAskerAloneOrIsNotSent() async {
        var secret = Reply.info("https://relay.example/console/signin?t=SECRET")
        secret.isSecret = true
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let placeholder = Self.entry(.progress(Self.progress), id: "progress:1", ref: "m1")
        #expect(await deliverer.deliver(Self.entry(.reply(secret), replaces: "progress:1"), earlier: placeholder) == .sent(platformRef: nil))
        #expect(platform.calls.first == "post asker [e1/0]: https://relay.example/console/signin?t=SECRET")
        #expect(!platform.calls.contains { $0.hasPrefix("edit m1") && $0.contains("SECRET") })

        var shown = secret
        shown.isPrivate = false
        let other = FakeDelivery()
        _ = await Deliverer(other, logger: Logger(label: "test")).deliver(Self.entry(.reply(shown)), earlier: nil)
        #expect(!other.calls.contains { $0.contains("SECRET") }, "\(other.calls)")
        #expect(other.calls.first?.contains("sent only where you alone can read it") == true, "\(other.calls)")
    }

    /// An answer still being written shows as the platform renders the whole answer: escaped,
    /// its first part only, marked as being written.
    @Test func anAnswerBeingWrittenIsRenderedAsTheAnswerIs() async {
        let platform = FakeDelivery()
        let deliverer = Deliverer(platform, logger: Logger(label: "test"))
        let placeholder = Self.entry(.progress(Self.progress), id: "progress:1", ref: "m1")
        let partial = Self.entry(.progress(.writing("Bon|jour", title: "Translation")), id: "e2", replaces: "progress:1")
        #expect(await deliverer.deliver(partial, earlier: placeholder) == .sent(platformRef: "m1"))
        #expect(platform.calls == ["edit m1 [e2/edit]: Bon"])
    }
}

/// A platform that records the calls it is asked to make. Its messages are `|`-separated parts
/// of a reply's body; it posts to "channel" (public), "webhook" (public, no reference), "asker"
/// (private) and "clicked" (the message holding a pressed button).
final class FakeDelivery: DeliveryPlatform, Sendable {
    typealias Place = Audience
    struct Failure: DeliveryFailure {
        var deliveryOutcome: DeliveryOutcome
        var reason: String { "\(deliveryOutcome)" }
    }

    let platform = "fake"
    let edits: Bool
    let refusing: [String: DeliveryOutcome]
    private let log = Mutex<[String]>([])
    private let posts = Mutex(0)

    init(edits: Bool = true, refusing: [String: DeliveryOutcome] = [:]) {
        self.edits = edits
        self.refusing = refusing
    }

    var calls: [String] { log.withLock { $0 } }

    func decode(_ address: String) -> String? { address }
    func render(_ reply: Reply, entryID: String, address: String) -> [String] { reply.body.split(separator: "|").map(String.init) }
    func render(_ progress: RunProgress) -> String { "⏳ " + progress.line }
    func render(note: String) -> String { note }
    func place(of reply: Reply, address: String) -> Place { reply.isPrivate ? .asker : .channel }
    func reachesAskerAlone(_ reply: Reply, address: String) async -> Bool { reply.isPrivate }
    func placeholder(address: String, earlier: OutboxEntry?) -> Placeholder<Place>? {
        guard edits, let ref = earlier?.platformRef else { return nil }
        return Placeholder(ref: ref, place: .channel)
    }
    func progressRoute(address: String) -> String? { edits ? "channel" : nil }
    func routes(for part: PartToSend<String, Place>) -> [PartRoute<String>] {
        part.reply.isPrivate ? [.post("asker")] : [.post("channel"), .post("webhook")]
    }
    func buttonMessage(address: String) -> ButtonMessage<String> { .replace(via: "clicked") }

    func post(_ message: String, via route: String, address: String, key: SendKey) async throws(Failure) -> String? {
        if let outcome = refusing[route] {
            log.withLock { $0.append("post \(route) [\(key.entryID)/\(key.step)]: refused") }
            throw Failure(deliveryOutcome: outcome)
        }
        log.withLock { $0.append("post \(route) [\(key.entryID)/\(key.step)]: \(message)") }
        guard route == "channel" else { return nil }
        let number = posts.withLock { count in
            count += 1
            return count
        }
        return "m\(number)"
    }

    func edit(_ placeholder: Placeholder<Place>, to message: String, address: String, key: SendKey) async throws(Failure) {
        log.withLock { $0.append("edit \(placeholder.ref) [\(key.entryID)/\(key.step)]: \(message)") }
    }
}
