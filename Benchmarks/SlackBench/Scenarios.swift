import BenchSupport
import Foundation
import RelayCore
import Synchronization

/// Hands out command numbers, so every command has its own `response_url`.
final class Counter: Sendable {
    private let next = Atomic<Int>(0)
    func take() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
}

/// Closed loop: each of `users` sends a command, waits for its reply at the sink, and sends the
/// next — as people at keyboards do. Measured over a window after a warm-up.
struct ClosedLoopScenario {
    var users: Int
    var warmup: Duration
    var window: Duration

    struct Result {
        var replies: Int
        /// Replies that arrived within the window, whenever their command was sent: the
        /// throughput where a reply takes a good part of the window (Telegram's pacing).
        var arrivals: Int
        var window: Duration
        var endToEnd: [Double]
        /// Server CPU time in the window: the relays' and the store's (PostgreSQL), which is `storeCPU`.
        var cpu: Duration
        var storeCPU: Duration
        var failed: Int
        var busy: Int
        /// Of the acknowledged commands whose reply had not come after 30 s, how many came by a
        /// minute after the run, and the latest of those after its command was sent.
        var answeredLate: Int
        var latest: Duration?
        /// The longest any acknowledged command waited for its reply, in the window or not
        /// (a user who gave up after 30 s counts with the reply's real arrival).
        var longestWait: Duration?
        /// How long after the load's end (every user stopped: answered, or gave up) the last
        /// reply arrived; zero when every reply came within the load.
        var lastAfterLoad: Duration
        var repliesPerSecond: Double { Double(replies) / window.seconds }
        var arrivalsPerSecond: Double { Double(arrivals) / window.seconds }
        /// The server's CPU time in the window over the replies that arrived in it.
        var cpuPerCommand: Double { arrivals == 0 ? .nan : cpu.seconds / Double(arrivals) }
        var storeCPUPerCommand: Double { arrivals == 0 ? .nan : storeCPU.seconds / Double(arrivals) }
    }

    private final class Tally: Sendable {
        let state = Mutex<(replies: Int, arrivals: Int, e2e: [Double], failed: Int, busy: Int)>((0, 0, [], 0, 0))
        /// Acknowledged commands not answered within 30 s, and when they were sent.
        let unanswered = Mutex<[Int: ContinuousClock.Instant]>([:])
        let cpuAtStart = Mutex<(all: Duration, store: Duration)?>(nil)
        /// Every acknowledged command and when it was sent, for the longest wait.
        let sent = Mutex<[Int: ContinuousClock.Instant]>([:])
    }

    func run(client: CommandClient, server: ServerGroup, counter: Counter) async -> Result {
        let start = ContinuousClock.now
        let windowStart = start + warmup
        let windowEnd = windowStart + window
        let tally = Tally()
        let users = users
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await Task.sleep(until: windowStart)
                let store = server.storeCPU
                tally.cpuAtStart.withLock { $0 = (server.relayCPU + store, store) }
            }
            for user in 0..<users {
                group.addTask {
                    while ContinuousClock.now < windowEnd {
                        let index = counter.take()
                        let ack = await client.send(index, user: user)
                        guard ack.status == 200 else {
                            tally.state.withLock { $0.failed += 1 }
                            continue
                        }
                        // Too busy: answered in the acknowledgement itself, no reply follows.
                        if ack.isBusy {
                            tally.state.withLock { $0.busy += 1 }
                            continue
                        }
                        tally.sent.withLock { $0[index] = ack.sent }
                        let answered = await client.sink.reply(index, timeout: .seconds(30))
                        let arrived = client.sink.arrivals()[index]
                        // Telegram: "busy" comes as the reply.
                        let busy = client.sink.isBusy(index)
                        tally.state.withLock { state in
                            guard answered, let arrived else {
                                state.failed += 1
                                tally.unanswered.withLock { $0[index] = ack.sent }
                                return
                            }
                            if busy {
                                state.busy += 1
                                return
                            }
                            if arrived >= windowStart, arrived <= windowEnd { state.arrivals += 1 }
                            guard ack.sent >= windowStart, arrived <= windowEnd else { return }
                            state.replies += 1
                            state.e2e.append((arrived - ack.sent).seconds)
                        }
                    }
                }
            }
        }
        let loadEnded = ContinuousClock.now
        let storeCPU = server.storeCPU
        let atStart = tally.cpuAtStart.withLock { $0 } ?? (.zero, .zero)
        let cpu = server.relayCPU + storeCPU - atStart.all
        // Late replies: delivered after the user gave up on them, or never.
        let unanswered = tally.unanswered.withLock { $0 }
        _ = await client.sink.waitForAll(unanswered.keys, timeout: .seconds(60))
        let arrivals = client.sink.arrivals()
        let late = unanswered.compactMap { index, sent in arrivals[index].map { $0 - sent } }
        let waits = tally.sent.withLock { $0 }.compactMap { index, sent in arrivals[index].map { $0 - sent } }
        let lastArrival = arrivals.values.max() ?? loadEnded
        return tally.state.withLock { state in
            Result(
                replies: state.replies, arrivals: state.arrivals, window: window, endToEnd: state.e2e, cpu: cpu, storeCPU: storeCPU - atStart.store,
                failed: state.failed,
                busy: state.busy, answeredLate: late.count, latest: late.max(), longestWait: waits.max(),
                lastAfterLoad: lastArrival > loadEnded ? lastArrival - loadEnded : .zero)
        }
    }
}

/// Open loop: `connections` clients send `commands` back to back, each waiting only for its ack,
/// as a flood would; then every reply is awaited. With `killAfterAcks`, the server is killed with
/// SIGKILL once that many commands were acknowledged, the senders stop, and the caller restarts it.
struct FloodScenario {
    var commands: Int
    var connections: Int
    var killAfterAcks: Int?

    struct Result {
        var started: ContinuousClock.Instant
        var acks: [Int: CommandClient.Ack]
        /// The server's CPU time when the flood began (the caller reads it again once replies are in).
        var cpuAtStart: Duration
        /// The server's CPU time once every sender had its acks (Telegram: replies still to come).
        var cpuAtLastAck: Duration

        /// Acknowledged and queued: a reply must follow.
        var accepted: [Int] { acks.filter { $0.value.status == 200 && !$0.value.isBusy }.map(\.key) }
        var busy: Int { acks.values.filter(\.isBusy).count }
        var lastAck: ContinuousClock.Instant { acks.values.filter { $0.status == 200 }.map(\.acked).max() ?? started }
        var ackLatencies: [Double] { acks.values.filter { $0.status == 200 }.map { ($0.acked - $0.sent).seconds } }
    }

    private final class Acks: Sendable {
        let state = Mutex<[Int: CommandClient.Ack]>([:])
        let accepted = Atomic<Int>(0)
        let killed = Atomic<Bool>(false)
    }

    func run(client: CommandClient, server: ServerGroup, counter: Counter) async -> Result {
        let started = ContinuousClock.now
        let cpuBefore = server.cpuTime()
        let acks = Acks()
        let commands = commands
        let killAfterAcks = killAfterAcks
        let next = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<connections {
                group.addTask {
                    while !acks.killed.load(ordering: .relaxed) {
                        let n = next.take()
                        guard n < commands else { return }
                        let index = counter.take()
                        let ack = await client.send(index, user: n % 1000)
                        acks.state.withLock { $0[index] = ack }
                        guard ack.status == 200 else { continue }
                        let count = acks.accepted.wrappingAdd(1, ordering: .relaxed).newValue
                        if let killAfterAcks, count == killAfterAcks {
                            acks.killed.store(true, ordering: .relaxed)
                            server.kill()
                        }
                    }
                }
            }
        }
        return Result(started: started, acks: acks.state.withLock { $0 }, cpuAtStart: cpuBefore, cpuAtLastAck: server.cpuTime())
    }
}
