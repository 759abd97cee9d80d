import AsyncHTTPClient
import BenchSupport
import Foundation
import Logging
import RelayCore
import RelayTestSupport

/// `--voice-burst N` (with `--voice --voice-kb K`, issue 47, point 4): N people send a K KB voice
/// note at the same moment, and the server's memory is read before, throughout (every 20 ms) and
/// after. The fake Bot API hands out files of any size, as a local Bot API server
/// (`telegram-bot-api --local`, up to 2 000 MB) does; the server's cap is raised to fit the note,
/// so every note is fetched whole and only the voice memory budget bounds what is held.
extension SlackBench {
    func measureVoiceBurst(http: HTTPClient, sink: ReplySink, backend: FakeRheaTribunal, voiceNotes: VoiceNotes) async throws {
        let quiet = Logger(label: "slack-bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let noteBytes = voiceNotes.clip.count
        let budget = environment["TRANSCRIPTION_MEMORY_BUDGET"].flatMap(Int.init) ?? 64 * 1024 * 1024
        print(
            "slack-bench --voice-burst on \(benchMachine()); server on CPUs \(serverCPUs ?? "any"), release, SQLite store; "
                + "\(voiceBurst) voice notes of \(noteBytes / 1024) KB sent at once, transcription.memoryBudget \(budget / 1024 / 1024) MB")
        let peer = try await TelegramSink.start(forwardingTo: sink, enforcing: false, voiceNotes: voiceNotes, logger: quiet)
        peer.api.fileLimit = 2_000 * 1024 * 1024
        let server = try await RelayProcess.start(
            launch(backend, sink: sink, peer: peer, extra: ["TRANSCRIPTION_MAX_BYTES": String(noteBytes + 1024 * 1024)]), http: http)
        await peer.connected()
        let client = self.client(http: http, sink: sink, peer: peer)
        // One warm-up note, so the "before" is a server that has heard one.
        _ = await client.send(0, user: 0)
        _ = await sink.waitForAll([0], timeout: .seconds(60))
        try await Task.sleep(for: .seconds(2))
        let before = server.memoryKiB() ?? 0

        let started = ContinuousClock.now
        let indices = Array(1...voiceBurst)
        let sampler = Task {
            var peak = 0
            while !Task.isCancelled {
                peak = max(peak, server.memoryKiB() ?? 0)
                try? await Task.sleep(for: .milliseconds(20))
            }
            return peak
        }
        await withTaskGroup(of: Void.self) { group in
            for index in indices { group.addTask { _ = await client.send(index, user: index) } }
        }
        let answered = await sink.waitForAll(indices, timeout: .seconds(120))
        let elapsed = ContinuousClock.now - started
        sampler.cancel()
        let peak = await sampler.value
        try await Task.sleep(for: .seconds(3))
        let after = server.memoryKiB() ?? 0
        let texts = (peer.api.calls("sendMessage") + peer.api.calls("editMessageText")).compactMap { $0.body["text"]?.stringValue }
        let refused = texts.filter { $0.contains("Too many voice notes") }.count
        let fetched = peer.api.calls("getFile").count - 1
        server.stop()
        await peer.stop()
        print(
            "\(voiceBurst) notes of \(noteBytes / 1024 / 1024) MB at once: RSS before \(mib(before)), peak \(mib(peak)) "
                + "(\(mib(peak - before)) above before; budget \(budget / 1024 / 1024) MB), after \(mib(after)) (\(mib(after - before)) above before); "
                + "\(answered ? "all answered" : "NOT all answered") in \(String(format: "%.1f", elapsed.seconds)) s, \(fetched) fetched, \(refused) told to send again"
        )
    }
}
