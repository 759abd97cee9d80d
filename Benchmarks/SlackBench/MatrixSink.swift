import Foundation
import Hummingbird
import Logging
import NIOCore
import RelayCore
import Synchronization

/// A homeserver for a `--platform matrix` run: the client-server calls the relay makes, answered
/// in process, so what the run measures is the relay's own cost (a real Synapse, the tests' peer,
/// would take the load generator's core for itself).
///
/// Commands are events the bench adds to the timeline (`post(_:user:text:)`): each user types in a
/// room of their own, and command `index`'s event id is `$cmd<index>`. A `/sync` answers the events
/// after its `since` position, so a relay restarted after a kill reads again what its predecessor
/// took but never stored, as from a homeserver. The relay answers with
/// a `PUT …/send/m.room.message/{txnId}` replying to it (`m.in_reply_to`), which is handed to the
/// `ReplySink`; a repeated transaction id is answered with the event it already made, as a
/// homeserver does, and counted once. `/sync` is a long poll: it answers as soon as events wait,
/// else after its timeout.
final class MatrixSink: PlatformPeer {
    private struct State {
        /// Every event typed, in order, with its room: a sync answers those after its `since`.
        var timeline: [(room: String, event: JSONValue)] = []
        var sent: [String: String] = [:]
        var repeats = 0
        var waiter: CheckedContinuation<Void, Never>?
        /// Whether a relay has made its first sync (which starts its timeline from now).
        var synced = false
        /// Every version of each command's answer (`--stream`): the message replying to it,
        /// then each `m.replace` of it, with when it arrived.
        var versions: [Int: [(Date, String)]] = [:]
        /// Which command each reply event answers, for its edits.
        var answering: [String: Int] = [:]
    }

    static let bot = "@relay:bench"
    static let token = "syt_bench_matrix_token"

    private let state = Mutex(State())
    private let task: Task<Void, any Error>
    /// Where accepted replies are recorded.
    private let replies: ReplySink
    let port: Int

    private init(port: Int, task: Task<Void, any Error>, replies: ReplySink) {
        self.port = port
        self.task = task
        self.replies = replies
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// The server's environment for this homeserver.
    var environment: [String: String] { ["MATRIX_HOMESERVER_URL": url, "MATRIX_ACCESS_TOKEN": Self.token] }

    /// Replies sent again under a transaction id already used (a homeserver shows them once).
    var summary: String? {
        let repeats = state.withLock { $0.repeats }
        return "homeserver saw \(repeats) repeated transaction ids"
    }

    /// The room user `user` types in.
    static func room(for user: Int) -> String { "!room\(user):bench" }

    /// Puts command `index`, typed by `user`, in the next `/sync` answer.
    func post(_ index: Int, user: Int, text: String) {
        let event: JSONValue = [
            "type": "m.room.message", "event_id": .string("$cmd\(index)"), "sender": .string("@user\(user):bench"),
            "origin_server_ts": .int(Int(Date().timeIntervalSince1970 * 1000)), "content": ["msgtype": "m.text", "body": .string(text)],
        ]
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.timeline.append((Self.room(for: user), event))
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    static func start(forwardingTo sink: ReplySink, logger: Logger) async throws -> MatrixSink {
        let box = Mutex<MatrixSink?>(nil)
        let router = Router()
        let json: @Sendable (JSONValue) -> Response = { value in
            Response(status: .ok, headers: [.contentType: "application/json"], body: ResponseBody(byteBuffer: ByteBuffer(bytes: value.encoded())))
        }
        router.get("_matrix/client/v3/account/whoami") { _, _ in json(["user_id": .string(bot)]) }
        router.get("_matrix/client/v3/profile/:user/displayname") { _, _ in json(["displayname": "Relay"]) }
        router.get("_matrix/client/v3/rooms/:room/state/m.room.encryption") { _, _ in
            Response(
                status: .notFound, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: #"{"errcode":"M_NOT_FOUND","error":"Event not found."}"#)))
        }
        router.put("_matrix/client/v3/rooms/:room/typing/:user") { _, _ in json([:]) }
        router.get("_matrix/client/v3/sync") { request, _ in
            guard let sink = box.withLock({ $0 }) else { return json([:]) }
            let timeout = request.uri.queryParameters.get("timeout").flatMap { Int($0) } ?? 0
            let since = request.uri.queryParameters.get("since").flatMap { Int($0.dropFirst()) }
            return json(await sink.sync(since: since, timeout: .milliseconds(min(timeout, 30_000))))
        }
        router.put("_matrix/client/v3/rooms/:room/send/:type/:txn") { request, context in
            let arrived = ContinuousClock.now
            let body = try await request.body.collect(upTo: 1 << 20)
            guard let sink = box.withLock({ $0 }), let txn = context.parameters.get("txn") else { return json([:]) }
            let content = JSONValue.parse(body.readableBytesView)
            let (event, isNew) = sink.state.withLock { state -> (String, Bool) in
                if let known = state.sent[txn] {
                    state.repeats += 1
                    return (known, false)
                }
                let event = "$reply\(state.sent.count)"
                state.sent[txn] = event
                return (event, true)
            }
            if isNew { sink.recordVersion(event: event, content: content) }
            if isNew, let command = content?["m.relates_to"]?["m.in_reply_to"]?["event_id"]?.stringValue, command.hasPrefix("$cmd"),
                let index = Int(command.dropFirst(4))
            {
                sink.replies.arrived(index, at: arrived, busy: content?["body"]?.stringValue?.contains("ahead of you") ?? false, message: "txn:\(txn)")
            }
            return json(["event_id": .string(event)])
        }
        let (port, task) = try await startLoopbackApp(router, name: "Matrix homeserver", logger: logger)
        let matrix = MatrixSink(port: port, task: task, replies: sink)
        box.withLock { $0 = matrix }
        return matrix
    }

    /// Files a new event as a version of the answer it is or edits.
    private func recordVersion(event: String, content: JSONValue?) {
        let relation = content?["m.relates_to"]
        state.withLock { state in
            if relation?["rel_type"]?.stringValue == "m.replace", let original = relation?["event_id"]?.stringValue,
                let index = state.answering[original]
            {
                state.versions[index, default: []].append((Date(), content?["m.new_content"]?["body"]?.stringValue ?? ""))
            } else if let command = relation?["m.in_reply_to"]?["event_id"]?.stringValue, command.hasPrefix("$cmd"),
                let index = Int(command.dropFirst(4))
            {
                state.answering[event] = index
                state.versions[index, default: []].append((Date(), content?["body"]?.stringValue ?? ""))
            }
        }
    }

    /// The versions of command `index`'s answer, oldest first; nil before it has one.
    func versions(_ index: Int) -> [(Date, String)]? {
        state.withLock { $0.versions[index] }
    }

    /// The `/sync` answer after position `since` (`s<N>`: the first N events): the events since,
    /// at once when there are some, else after `timeout` (or sooner, when one is typed). A first
    /// sync (no `since`) starts from now, as a homeserver's does for a new client's timeline.
    private func sync(since: Int?, timeout: Duration) async -> JSONValue {
        guard let since else {
            let now = state.withLock { state in
                state.synced = true
                return state.timeline.count
            }
            return ["next_batch": .string("s\(now)")]
        }
        if state.withLock({ $0.timeline.count <= since }), timeout > .zero {
            let timer = Task {
                try await Task.sleep(for: timeout)
                self.wake()
            }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.timeline.count > since { return true }
                    state.waiter?.resume()
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            timer.cancel()
        }
        let (news, end) = state.withLock { state in (Array(state.timeline.dropFirst(since)), state.timeline.count) }
        var rooms: [String: [JSONValue]] = [:]
        for (room, event) in news { rooms[room, default: []].append(event) }
        let join = rooms.mapValues { events -> JSONValue in ["timeline": ["events": .array(events), "limited": false]] }
        return ["next_batch": .string("s\(end)"), "rooms": ["join": .object(join)]]
    }

    /// Waits until a relay has made its first sync: a command typed before it would be history
    /// to the relay, as to any new Matrix client, and never answered.
    func connected() async {
        let end = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < end, !state.withLock({ $0.synced }) { try? await Task.sleep(for: .milliseconds(10)) }
    }

    private func wake() {
        state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    func stop() async {
        wake()
        task.cancel()
        _ = await task.result
    }
}
