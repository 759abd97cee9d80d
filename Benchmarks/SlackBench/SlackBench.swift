import ArgumentParser
import AsyncHTTPClient
import BenchSupport
import Foundation
import Logging
import NIOCore
import RelayCore
import RelayTestSupport

/// Drives signed Slack `/translate ja …` slash commands at `rhea-relay serve` (a separate process,
/// so its memory and CPU time are its own) backed by a fake Rhea Tribunal answering
/// `POST /keyboard/quick`, with each command's `response_url` at a sink in this process. The
/// workload of issue 10, in the same figures:
///
/// - closed loop: N users each send a command, wait for its reply, send the next (`--users`,
///   `users@backend-ms`): replies/s, end-to-end p50/p99, server CPU per command;
/// - flood: `--flood` commands from `--flood-connections` clients that wait only for acks:
///   acks/s, replies/s, ack p99, reply p50, last reply after last ack, peak RSS, lost, doubled;
/// - crash: a second flood, the server killed with SIGKILL half way, restarted on the same
///   store: lost and doubled replies, and visible doubles — answers people see in two messages
///   (a resend that posted anew; one that edited the same message, or that the platform
///   deduplicated, is not one);
/// - idle RSS and start to ready;
/// - `--slow N`: N connections trickling a body (issue 9).
///
/// With `--platform discord` the same workload goes through Discord instead (issue 11, point 8):
/// each command is a `/translate` application command interaction signed with an Ed25519 key
/// made at start (its public half is the server's `DISCORD_PUBLIC_KEY`), acknowledged with a
/// deferred response, and answered by editing the interaction's `@original` at the sink, which
/// plays Discord's REST API (`DISCORD_API_URL`) and answers as Discord does.
///
/// With `--platform telegram` it goes through Telegram's webhook (issue 12, point 9): each command
/// is `/translate ja …` typed by a simulated user in their own private chat with the bot, as a
/// `message` update POSTed to `/telegram/webhook` with `X-Telegram-Bot-Api-Secret-Token`, and
/// answered at a `FakeTelegramBotAPI` (`TELEGRAM_API_URL`) by a placeholder `sendMessage` replying
/// to it, then the `editMessageText` that puts the answer in it. The
/// relay paces its sends as Telegram requires (1 message/s per chat, 30/s overall), so replies/s
/// are capped at 30 by design: the figures that say something about the server are acks/s, CPU
/// per command, memory, and that every acknowledged update is answered exactly once. The flood
/// defaults to 3 000 updates (about 100 s of replies at 30/s), the closed loops to a 10 s warm-up
/// and a 20 s window (a 200-user loop takes 7 s to answer its first round).
///
/// With `--platform matrix` each command is `!translate ja …` typed in the user's room at an
/// in-process homeserver (`MatrixSink`), read by the relay's `/sync` long poll and answered by a
/// `PUT …/send/m.room.message/{txnId}` replying to it: what is measured is the relay's cost per
/// command over the client-server API (a real Synapse, the tests' peer, would need a core of its
/// own). There is no acknowledgement: a command's "ack" is its hand-over to the homeserver.
///
/// With `--store postgres [--replicas N]` the servers keep their store in one PostgreSQL database
/// (issue 24, point 10): the bench starts a PostgreSQL of its own, run as in production (fsync on)
/// and pinned to the server's CPUs, and N `serve` processes on ports `--port`… share it, each user
/// talking to one of them. CPU per command is the relays' and PostgreSQL's together (its share
/// shown apart), and the round trips per command are the statements the relays sent (their
/// `relay_store_round_trips_total`) over the replies. No kill -9 run there:
/// `ReplicaFaultTests` kills replicas of a shared store.
///
///     swift build -c release --product rhea-relay && swift build -c release --product slack-bench
///     taskset -c 1 .build/release/slack-bench --server-cpus 0 [--platform discord|telegram|matrix|mattermost|teams|google-chat|irc|xmpp]
@main
struct SlackBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "slack-bench", abstract: "Signed slash commands against rhea-relay serve: throughput, latency, CPU, memory, crash safety.")

    @Option(
        help:
            "The chat platform the commands come from: slack (signed slash commands), discord (signed interactions), telegram (webhook updates), matrix (room messages read by /sync) or mattermost (slash commands with their token, answered through REST v4) or teams (signed activities, answered through the Bot Connector) or google-chat (signed events, answered in the event or through the Chat API) or irc (lines said at an in-process IRC server, over the relay's one connection) or xmpp (one-to-one messages at an in-process XMPP server, over the relay's one session)."
    )
    var platform = BenchPlatform.slack

    @Option(help: "Closed-loop runs, comma-separated users@backend-ms (empty: none).")
    var users = "32@0,200@200"

    @Option(help: "Seconds measured per closed-loop run, after the warm-up (default 10; 20 for telegram).")
    var seconds: Double?

    @Option(help: "Warm-up seconds before each closed-loop window (default 2; 10 for telegram).")
    var warmup: Double?

    @Option(help: "Commands in the flood (0: no flood and no crash run; default 20000, 3000 for telegram).")
    var flood: Int?

    @Option(help: "Clients sending the flood, each waiting only for its acks.")
    var floodConnections = 64

    @Flag(inversion: .prefixedNo, help: "Kill the server with SIGKILL half way through a second flood and restart it.")
    var crash = true

    @Option(help: "The rhea-relay binary to serve with.")
    var relay = ".build/release/rhea-relay"

    @Option(help: "Port for the relay under test.")
    var port = 18231

    @Option(name: .customLong("server-cpus"), help: "Pin the server to these CPUs (taskset -c), e.g. 0; run the bench itself on the others.")
    var serverCPUs: String?

    @Option(help: "Extra environment for the server, comma-separated NAME=value (e.g. RELAY_MAX_RUNS=64).")
    var serverEnv = ""

    @Option(help: "Slow connections to open after the other runs (0: none).")
    var slow = 0

    @Option(help: "Seconds between two bytes of a slow connection's body.")
    var slowInterval = 2.0

    @Option(help: "The server's http.readTimeout for the slow scenario, in seconds (unset: the server's default).")
    var readTimeout: Double?

    @Option(help: "Append the server's output (logs at LOG_LEVEL, `error` unless --server-env sets it) to this file.")
    var serverLog: String?

    @Flag(help: "Telegram: the fake Bot API answers 429 past Telegram's limits (default: it only records how fast messages came).")
    var telegramEnforceLimits = false

    @Flag(
        help:
            "Telegram: every command is a voice note captioned `/translate ja`, which the relay fetches from the fake Bot API and sends to a fake transcription service that answers at once (the relay's own cost per voice command)."
    )
    var voice = false

    @Option(help: "With --voice: pad the spoken clip (about 12 KB) to this many KB, as a longer note's bytes (0: as spoken).")
    var voiceKB = 0

    @Option(
        help:
            "With --voice: instead of the closed loop, this many people send a --voice-kb note at the same moment; the server's RSS before, at its peak and after (the voice memory budget, docs/voice.md)."
    )
    var voiceBurst = 0

    @Option(help: "Where the servers keep their store: sqlite (a file each) or postgres (one database on a PostgreSQL the bench starts).")
    var store = BenchStore.sqlite

    @Option(help: "Servers sharing the store (postgres only), on --port, --port + 1…; users are spread over them.")
    var replicas = 1

    @Flag(
        help:
            "Answers written as the model streams them (slack, telegram or matrix): --stream-users people ask at once, the model streams --tokens-per-second for --stream-seconds; first text, edits, 429s and CPU per answer against the same answers unstreamed."
    )
    var stream = false

    @Option(help: "With --stream: people asking at once.")
    var streamUsers = 200

    @Option(help: "With --stream: tokens a second the model writes.")
    var tokensPerSecond = 30.0

    @Option(help: "With --stream: seconds the model writes each answer for.")
    var streamSeconds = 10.0

    /// Shaped like Slack's signing secrets (32 lower-case letters and digits), as `serve` requires.
    static let secret = "benchsigningsecret00000000000001"
    /// The Discord application's key pair, made at start.
    static let discordSigner = FakeDiscordSigner()
    static let discordBotToken = "MTEwMDAwMDAwMDAwMDAwMDAwMg.bench.c2luay10b2tlbi1mb3ItdGhlLWJlbmNo"

    func run() async throws {
        if platform != .slack, slow > 0 { throw ValidationError("--slow sends Slack slash commands: use it with --platform slack.") }
        if voice, platform != .telegram { throw ValidationError("--voice sends Telegram voice notes: use it with --platform telegram.") }
        if voiceBurst > 0, !voice { throw ValidationError("--voice-burst sends voice notes: use it with --voice (and --voice-kb for their size).") }
        if replicas < 1 || (replicas > 1 && store != .postgres) { throw ValidationError("--replicas N > 1 shares one store: use it with --store postgres.") }
        if stream, ![.slack, .telegram, .matrix].contains(platform) { throw ValidationError("--stream runs on --platform slack, telegram or matrix.") }
        if stream, store != .sqlite { throw ValidationError("--stream runs on the embedded SQLite store.") }
        guard FileManager.default.isExecutableFile(atPath: relay) else {
            throw ValidationError("\(relay) is not built: run `swift build -c release --product rhea-relay` first.")
        }
        let quiet = Logger(label: "slack-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let backend = try await FakeRheaTribunal.start(logger: quiet)
        let sink = try await ReplySink.start(logger: quiet)
        let voiceNotes = voice ? try await VoiceNotes.start(paddedToKB: voiceKB, logger: quiet) : nil
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 512)
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let postgres = store == .postgres ? try await PostgresUnderBench.start(cpus: serverCPUs) : nil
        do {
            if stream {
                print("slack-bench --stream on \(benchMachine()); server on CPUs \(serverCPUs ?? "any"), release, SQLite store")
                let base = launch(backend, sink: sink)
                try await StreamBench(
                    platform: platform, users: streamUsers, tokensPerSecond: tokensPerSecond, seconds: streamSeconds,
                    launch: { extra in
                        var launch = base
                        launch.environment.merge(extra) { $1 }
                        return launch
                    }
                ).run(http: http)
            } else if voiceBurst > 0, let voiceNotes {
                try await measureVoiceBurst(http: http, sink: sink, backend: backend, voiceNotes: voiceNotes)
            } else {
                try await measure(http: http, sink: sink, backend: backend, postgres: postgres, voiceNotes: voiceNotes)
            }
        } catch {
            await voiceNotes?.stop()
            await postgres?.stop()
            try? await http.shutdown()
            await sink.stop()
            await backend.stop()
            throw error
        }
        await voiceNotes?.stop()
        await postgres?.stop()
        try await http.shutdown()
        await sink.stop()
        await backend.stop()
    }

    var environment: [String: String] {
        Dictionary(
            serverEnv.split(separator: ",").compactMap { pair -> (String, String)? in
                let parts = pair.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { _, new in new })
    }

    /// The run's settings, with the platform's defaults where not given.
    var windowSeconds: Double { seconds ?? (platform == .telegram ? 20 : 10) }
    var warmupSeconds: Double { warmup ?? (platform == .telegram ? 10 : 2) }
    /// IRC's and XMPP's: one line from each of 1 000 people at once. A server passes a person a few lines a
    /// second, so 20 000 at once, twenty from each, is no load an IRC bot meets.
    var floodCommands: Int { flood ?? (platform == .telegram ? 3000 : platform == .irc || platform == .xmpp ? 1000 : 20000) }

    /// How long to wait for every acknowledged command's reply: 2 minutes, or for Telegram,
    /// whose sends are paced at 30/s overall, a minute more than `count` replies take at 20/s.
    func replyDeadline(_ count: Int) -> Duration {
        platform == .telegram ? .seconds(max(120, 60 + count / 20)) : .seconds(120)
    }

    /// The platform's own server for one relay's lifetime: a fake Bot API for `--platform
    /// telegram`, a homeserver for `matrix`; nil for the platforms the reply sink plays.
    func startPeer(_ sink: ReplySink, voiceNotes: VoiceNotes?, logger: Logger) async throws -> (any PlatformPeer)? {
        switch platform {
        case .telegram: try await TelegramSink.start(forwardingTo: sink, enforcing: telegramEnforceLimits, voiceNotes: voiceNotes, logger: logger)
        case .matrix: try await MatrixSink.start(forwardingTo: sink, logger: logger)
        case .irc: try await IRCSink.start(forwardingTo: sink, logger: logger)
        case .xmpp: try await XMPPSink.start(forwardingTo: sink, logger: logger)
        case .slack, .discord, .mattermost, .teams, .googleChat: nil
        }
    }

    func launch(_ backend: FakeRheaTribunal, sink: ReplySink, peer: (any PlatformPeer)? = nil, extra: [String: String] = [:]) -> RelayProcess.Launch {
        var platformEnvironment: [String: String] = peer?.environment ?? [:]
        if platform == .slack {
            // The sink plays Slack's hooks: a `response_url` is called only on Slack's hook host
            // or on SLACK_API_URL's origin, so that names the sink's.
            platformEnvironment = ["SLACK_API_URL": sink.slackAPIURL]
        }
        if platform == .mattermost {
            // As "Mattermost in 10 minutes" deploys it with the bot, on a replica without the
            // websocket: slash commands checked by their token, answers posted through REST v4.
            platformEnvironment = [
                "MATTERMOST_COMMAND_TOKENS": CommandClient.mattermostCommandToken, "MATTERMOST_URL": sink.mattermostURL,
                "MATTERMOST_BOT_TOKEN": "benchbottoken0000000000001", "MATTERMOST_WEBSOCKET": "false",
            ]
        }
        if platform == .teams {
            // The sink plays the Bot Framework: its keys sign each activity's token, its token
            // endpoint grants the relay's, and its Bot Connector takes the answers.
            platformEnvironment = [
                "TEAMS_APP_ID": ReplySink.teamsAppID, "TEAMS_APP_PASSWORD": "bench-app-password", "TEAMS_OPENID_METADATA_URL": sink.teamsMetadataURL,
                "TEAMS_TOKEN_URL": sink.teamsTokenURL,
            ]
        }
        if platform == .googleChat {
            // The sink plays Google: its key signs each event's token, its token endpoint grants
            // the relay's, and its Chat API takes answers not ready within their event.
            platformEnvironment = sink.google.environment(port: sink.port)
        }
        if platform == .discord {
            // As "Discord in 10 minutes" deploys it, on a replica without the gateway: the bot
            // token also keys the box that seals interaction tokens in the outbox, so answers
            // pending at a crash can still be delivered after the restart.
            platformEnvironment = [
                "DISCORD_PUBLIC_KEY": Self.discordSigner.publicKeyHex, "DISCORD_API_URL": sink.discordAPIURL, "DISCORD_BOT_TOKEN": Self.discordBotToken,
                "DISCORD_APPLICATION_ID": FakeDiscordAPI.applicationID, "DISCORD_GATEWAY": "false",
            ]
        }
        return RelayProcess.Launch(
            binary: relay, port: port, backendURL: backend.url, secret: platform == .slack ? Self.secret : nil, cpus: serverCPUs,
            environment: environment.merging(platformEnvironment) { _, new in new }.merging(extra) { _, new in new }, log: serverLog)
    }

    /// A client sending commands the `--platform`'s way.
    func client(http: HTTPClient, sink: ReplySink, peer: (any PlatformPeer)?) -> CommandClient {
        CommandClient(
            http: http, port: port, replicas: replicas, secret: Self.secret, sink: sink, platform: platform, discordSigner: Self.discordSigner,
            matrix: peer as? MatrixSink, socket: peer as? any SocketPeer, voiceFile: (peer as? TelegramSink)?.voiceFile)
    }

    func measure(http: HTTPClient, sink: ReplySink, backend: FakeRheaTribunal, postgres: PostgresUnderBench?, voiceNotes: VoiceNotes?) async throws {
        let storeName = postgres == nil ? "SQLite store" : "PostgreSQL store (fsync on, pinned with the server) shared by \(replicas) replica(s)"
        print("slack-bench (\(platform.rawValue)) on \(benchMachine()); server on CPUs \(serverCPUs ?? "any"), release, \(storeName)")
        func startServers(_ launch: RelayProcess.Launch) async throws -> ServerGroup {
            try await ServerGroup.start(launch, replicas: replicas, postgres: postgres, http: http)
        }
        if platform == .telegram {
            print(
                "Telegram: webhook updates, one private chat per user; the fake Bot API "
                    + (telegramEnforceLimits ? "answers 429 past Telegram's limits" : "does not enforce Telegram's limits (the relay's own pacing is measured)")
            )
        }
        if let voiceNotes {
            print("voice: every command is a \(voiceNotes.clip.count / 1024) KB voice note captioned /translate ja; the transcription service answers at once")
        }
        let quiet = Logger(label: "slack-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let counter = Counter()
        var table: [String] = []
        let flood = floodCommands

        // Idle memory and start to ready, on a fresh store.
        let idlePeer = try await startPeer(sink, voiceNotes: voiceNotes, logger: quiet)
        let fresh = try await startServers(launch(backend, sink: sink, peer: idlePeer))
        try await Task.sleep(for: .seconds(1))
        let idle = fresh.memoryKiB()
        let ready = fresh.startToReady
        // Telegram's replies trickle out over minutes: what the server costs doing nothing.
        var idleCPU = ""
        if platform == .telegram {
            let before = fresh.cpuTime()
            try await Task.sleep(for: .seconds(10))
            idleCPU = String(format: ", idle CPU %.1f ms/s", (fresh.cpuTime() - before).seconds * 100)
        }
        _ = await fresh.stop()
        await idlePeer?.stop()
        print("idle RSS \(mib(idle)), start to ready \(ready.ms)\(idleCPU)")

        for run in users.split(separator: ",") {
            let parts = run.split(separator: "@")
            guard let count = Int(parts[0]) else { throw ValidationError("--users takes users@backend-ms, e.g. 32@0") }
            let delay = parts.count > 1 ? Double(parts[1]) ?? 0 : 0
            await backend.setDelay(path: FakeRheaTribunal.quickPath, seconds: delay / 1000)
            sink.reset()
            let peer = try await startPeer(sink, voiceNotes: voiceNotes, logger: quiet)
            let server = try await startServers(launch(backend, sink: sink, peer: peer))
            await peer?.connected()
            let client = self.client(http: http, sink: sink, peer: peer)
            let result = await ClosedLoopScenario(users: count, warmup: .seconds(warmupSeconds), window: .seconds(windowSeconds))
                .run(client: client, server: server, counter: counter)
            let peak = server.peakMemoryKiB()
            let roundTrips = await server.stop()
            var line =
                "\(count) users, backend \(Int(delay)) ms: \(String(format: "%.0f", result.repliesPerSecond)) replies/s "
                + "(\(String(format: "%.0f", result.arrivalsPerSecond))/s arriving in the window), "
                + "e2e p50 \(ms(percentile(result.endToEnd, 0.5))) p99 \(ms(percentile(result.endToEnd, 0.99))), "
                + "CPU per command \(ms(result.cpuPerCommand)), peak RSS \(mib(peak))"
                + (postgres == nil ? "" : " (PostgreSQL's \(ms(result.storeCPUPerCommand)))")
                + ", failed \(result.failed), busy \(result.busy)"
                + ", longest wait \(result.longestWait?.ms ?? "-"), last reply \(result.lastAfterLoad.ms) after the load's end"
            if let roundTrips {
                // Over the whole run (warm-up and tail too): every reply the sink received.
                let answered = sink.counts().values.reduce(0, +)
                line += String(format: ", PostgreSQL round trips per command %.2f", Double(roundTrips) / Double(max(1, answered)))
            }
            if result.failed > 0 {
                line +=
                    " (no reply within 30 s: \(result.failed); answered later \(result.answeredLate), the last \(result.latest?.ms ?? "-") after its command)"
            }
            if let peer {
                if let summary = peer.summary { line += "; " + summary }
                await peer.stop()
            }
            print(line)
            table.append(line)
        }

        if flood > 0 {
            await backend.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0)
            sink.reset()
            let peer = try await startPeer(sink, voiceNotes: voiceNotes, logger: quiet)
            let server = try await startServers(launch(backend, sink: sink, peer: peer))
            await peer?.connected()
            let client = self.client(http: http, sink: sink, peer: peer)
            let result = await FloodScenario(commands: flood, connections: floodConnections).run(client: client, server: server, counter: counter)
            let accepted = result.accepted
            _ = await sink.waitForAll(accepted, timeout: replyDeadline(accepted.count))
            let peak = server.peakMemoryKiB()
            let cpu = server.cpuTime() - result.cpuAtStart
            let roundTrips = await server.stop()
            var line = floodLine(result, flood: flood, accepted: accepted, sink: sink, peakKiB: peak, cpu: cpu)
            if let roundTrips {
                line += String(format: ", PostgreSQL round trips per command %.2f", Double(roundTrips) / Double(max(1, accepted.count)))
            }
            if let peer {
                if let summary = peer.summary { line += "; " + summary }
                await peer.stop()
            }
            print(line)
            table.append(line)

            if crash && postgres != nil {
                print("kill -9: not run on PostgreSQL (ReplicaFaultTests kills replicas of a shared store)")
            }
            if crash && (platform == .irc || platform == .xmpp) {
                // A line written to a relay that dies before reading it is lost on the socket
                // itself: the bench cannot tell what the relay took (IRCCrashTests and
                // XMPPCrashTests read its store).
                print("kill -9: not run on \(platform.rawValue) (its crash test kills a relay and counts what its store took)")
            }
            if crash && postgres == nil && platform != .irc && platform != .xmpp {
                sink.reset()
                let peer = try await startPeer(sink, voiceNotes: voiceNotes, logger: quiet)
                let first = try await startServers(launch(backend, sink: sink, peer: peer))
                await peer?.connected()
                let killed = await FloodScenario(commands: flood, connections: floodConnections, killAfterAcks: flood / 2)
                    .run(client: self.client(http: http, sink: sink, peer: peer), server: first, counter: counter)
                // Every reply that reaches the sink before this comes from the killed process
                // (some it sent just before dying are read after the kill).
                let relaunched = ContinuousClock.now
                let restarted = try await RelayProcess.start(
                    launch(backend, sink: sink, peer: peer), http: http, storePath: first.relays[0].storePath)
                let accepted = killed.accepted
                _ = await sink.waitForAll(accepted, timeout: replyDeadline(accepted.count))
                try await Task.sleep(for: .seconds(1))  // late doubles, if any, arrive
                restarted.stop()
                let counts = sink.counts()
                let lost = accepted.filter { (counts[$0] ?? 0) == 0 }.count
                let doubled = sink.doubles(aroundRestartAt: relaunched)
                let busy = killed.busy + accepted.filter(sink.busyReplies().contains).count
                var line =
                    "kill -9 after \(flood / 2) acks of a second flood, restarted on the same store: \(accepted.count) acknowledged, "
                    + "\(busy) answered busy, lost \(lost), doubled beyond the window \(doubled.beyond) "
                    + "(in the window, answered once before the kill and once after: \(doubled.inWindow)), "
                    + "\(platform.rawValue) visible doubles (an answer shown in two messages) \(sink.visibleDoubles()), "
                    + "restart to ready \(restarted.startToReady.ms)"
                if let peer {
                    if let summary = peer.summary { line += "; " + summary }
                    await peer.stop()
                }
                print(line)
                table.append(line)
            }
        }

        if slow > 0 { try await measureSlow(http: http, sink: sink, backend: backend) }

        print(String(repeating: "-", count: 110))
        for line in table { print(line) }
    }

    func floodLine(_ result: FloodScenario.Result, flood: Int, accepted: [Int], sink: ReplySink, peakKiB: Int?, cpu: Duration) -> String {
        let arrivals = sink.arrivals()
        let counts = sink.counts()
        // Telegram says "busy" in a reply: acknowledged, answered, but not run.
        let busy = result.busy + accepted.filter(sink.busyReplies().contains).count
        let lost = accepted.filter { arrivals[$0] == nil }.count
        let doubled = counts.values.filter { $0 > 1 }.count
        let lastReply = accepted.compactMap { arrivals[$0] }.max() ?? result.started
        let acksPerSecond = Double(result.acks.count) / (result.lastAck - result.started).seconds
        let repliesPerSecond = Double(accepted.count - lost) / (lastReply - result.started).seconds
        let replyLatency = accepted.compactMap { index in arrivals[index].map { ($0 - result.acks[index]!.sent).seconds } }
        // Telegram: most replies go after the last ack, paced; the CPU until then and after it.
        var cpuSplit = ""
        if platform == .telegram {
            let ingest = result.cpuAtLastAck - result.cpuAtStart
            let delivered = accepted.filter { arrivals[$0].map { $0 > result.lastAck } ?? false }.count
            cpuSplit =
                " (until the last ack \(String(format: "%.2f", ingest.seconds)) s; after it \(String(format: "%.2f", (cpu - ingest).seconds)) s "
                + "for \(delivered) replies)"
        }
        return "flood of \(flood) from \(floodConnections) connections: \(String(format: "%.0f", acksPerSecond)) acks/s, "
            + "\(String(format: "%.0f", repliesPerSecond)) replies/s, ack p50 \(ms(percentile(result.ackLatencies, 0.5))) "
            + "p99 \(ms(percentile(result.ackLatencies, 0.99))), reply p50 \(ms(percentile(replyLatency, 0.5))), "
            + "last reply \((lastReply - result.lastAck).ms) after the last ack, peak RSS \(mib(peakKiB)), "
            + "CPU per command \(ms(cpu.seconds / Double(max(1, accepted.count))))\(cpuSplit), "
            + "busy \(busy), lost \(lost), doubled \(doubled), non-200 acks \(result.acks.values.filter { $0.status != 200 }.count)"
    }

    func measureSlow(http: HTTPClient, sink: ReplySink, backend: FakeRheaTribunal) async throws {
        await backend.setDelay(path: FakeRheaTribunal.quickPath, seconds: 0)
        sink.reset()
        var extra: [String: String] = [:]
        if let readTimeout { extra["HTTP_READ_TIMEOUT"] = String(readTimeout) }
        let server = try await RelayProcess.start(launch(backend, sink: sink, extra: extra), http: http)
        defer { server.stop() }
        let idle = server.peakMemoryKiB()
        let scenario = SlowConnectionScenario(connections: slow, interval: .seconds(slowInterval), giveUpAfter: .seconds(120), commands: 50)
        let started = ContinuousClock.now
        let client = self.client(http: http, sink: sink, peer: nil)
        let result = try await scenario.run(port: port, client: client)
        let peak = server.peakMemoryKiB()
        server.stop()
        let closed = result.closedAfter.map(\.seconds).sorted()
        func at(_ p: Double) -> String { closed.isEmpty ? "-" : String(format: "%.1f s", closed[Int(p * Double(closed.count - 1))]) }
        print(
            "slow: \(slow) connections trickling a byte every \(slowInterval) s: closed by the server \(closed.count), still open after 120 s "
                + "\(result.stillOpen), could not connect \(result.failedToConnect); closed after min \(at(0)) p50 \(at(0.5)) max \(at(1)); "
                + "meanwhile \(result.commandsAcked)/50 commands acknowledged, \(result.commandsAnswered)/50 answered; "
                + "server RSS at start \(mib(idle)), peak \(mib(peak)); took \(ContinuousClock.now - started)")
    }

    /// The CPU model and core count, for the report.
}

/// Where the bench's commands come from.
enum BenchPlatform: String, ExpressibleByArgument, CaseIterable, Sendable {
    /// Signed slash commands to `/slack/commands`, answered at their `response_url`.
    case slack
    /// Signed interactions to `/discord/interactions`, answered by editing their `@original`.
    case discord
    /// Updates to `/telegram/webhook` with the secret token, answered by `sendMessage` at a fake Bot API.
    case telegram
    /// `!translate …` typed in a room, read by the relay's `/sync` from an in-process homeserver,
    /// answered by a `PUT …/send` under a transaction id (`MatrixSink`).
    case matrix
    /// Slash commands to `/mattermost/commands` with their token, answered by the bot's
    /// `POST /api/v4/posts` at the sink (which plays Mattermost's REST API).
    case mattermost
    /// Activities to `/teams/messages` with the Bot Connector's RS256 token, answered by a
    /// placeholder updated into the answer at the sink (which plays the Bot Framework).
    case teams
    /// Events to `/google-chat/events` with Google Chat's RS256 token, answered in the event's
    /// own answer when ready in time, else through the Chat API at the sink (which plays Google).
    case googleChat = "google-chat"
    /// `!translate …` said in a channel of each user's own at an in-process IRC server, over the
    /// relay's one connection, answered in lines there (`IRCSink`), at a pace the server allows.
    case irc
    /// `!translate …` written one to one by each user at an in-process XMPP server, over the
    /// relay's one session, answered in one message each (`XMPPSink`).
    case xmpp
}
