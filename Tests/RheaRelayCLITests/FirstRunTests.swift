import Foundation
import RelayCore
import RelayTestSupport
import RelayTestTags
import Testing

/// A first run with no backend configured: the local model `scripts/local-model` serves, or one
/// message that says what to run.
@Suite("first run: no backend configured", .tags(.peers))
struct FirstRunTests {
    /// Nothing answers where the local model would: exit 2 with what to run, nothing else tried.
    @Test(arguments: [["run", "/translate fr Good morning"], ["serve"]])
    func withNoLocalModelItSaysWhatToRun(arguments: [String]) async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        // HTTP_PORT 0: any port; `serve` must exit before it listens anyway.
        let (local, output) = try await withRefusingLoopbackPort { port in
            let local = "http://127.0.0.1:\(port)/v1"
            return (local, try await cli.run(arguments, environment: ["LOCAL_MODEL_URL": local, "HTTP_PORT": "0"], timeout: 30))
        }
        #expect(output.status == 2, "\(output.stderr)")
        #expect(output.stdout.isEmpty, "\(output.stdout)")
        #expect(output.stderr.contains("no AI backend is configured, and no local model answers at \(local)."), "\(output.stderr)")
        #expect(output.stderr.contains("scripts/local-model start"), "\(output.stderr)")
        #expect(output.stderr.contains("TRIBUNAL_URL="), "\(output.stderr)")
        #expect(output.stderr.contains("TRIBUNAL_BACKEND=council COUNCIL_MODELS="), "\(output.stderr)")
        #expect(!output.stderr.contains("serving on"), "\(output.stderr)")
        #expect(!output.stderr.lowercased().contains("embedded"), "the hosted gateway is never called embedded: \(output.stderr)")
    }

    /// A model answers `/v1/models` at the local address: `run` asks it and shows its answer.
    @Test func runUsesTheLocalModelWhenItAnswers() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let model = try await FakeOpenAIServer.start(persona: .prose("Bonjour"), model: "smollm2-135m-instruct")
        let output = try await cli.run(["run", "/translate fr Good morning"], environment: ["LOCAL_MODEL_URL": model.url])
        let asked = model.requests().filter { $0.path.hasSuffix("/chat/completions") }
        await model.stop()
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Bonjour"), "\(output.stdout)")
        #expect(asked.count == 1)
        #expect(asked.first?["model"]?.stringValue == "smollm2-135m-instruct", "the model /v1/models listed")
    }

    /// `serve` and `chat` say which backend they chose, and why.
    @Test func serveAndChatSayTheyChoseTheLocalModel() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let model = try await FakeOpenAIServer.start(model: "smollm2-135m-instruct")
        let chat = try await cli.run(["chat"], environment: ["LOCAL_MODEL_URL": model.url], stdin: "/quit\n")
        let serve = try await ServeProcess(
            environment: ["LOCAL_MODEL_URL": model.url, "STORE_PATH": cli.directory.appendingPathComponent("s.sqlite").path], directory: cli.directory)
        let said = await serve.stop()
        await model.stop()
        let chosen = "the local model smollm2-135m-instruct at \(model.url) (no backend is configured"
        #expect(chat.stdout.contains("Backend: \(chosen)"), "\(chat.stdout)")
        #expect(said.contains("backend: \(chosen)"), "\(said)")
    }

    /// The local model's council keeps `council.timeout`: a model slower than it fails in that
    /// time, naming the setting to raise (not the gateway's `tribunal.timeouts`), and one within
    /// a longer limit answers. In `chat`, the council's warning about the slow model does not
    /// land among the replies.
    @Test func theLocalModelKeepsTheCouncilsTimeout() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let model = try await FakeOpenAIServer.start(persona: .slow(seconds: 2, then: .prose("Bonjour")), model: "smollm2-135m-instruct")
        let short = try await cli.run(["run", "/translate fr Good morning"], environment: ["LOCAL_MODEL_URL": model.url, "COUNCIL_TIMEOUT": "1"])
        #expect(short.status == 1, "\(short.stdout)\(short.stderr)")
        #expect(short.stderr.contains("did not answer within 1 s"), "\(short.stderr)")
        #expect(short.stderr.contains("council.timeout (COUNCIL_TIMEOUT)"), "\(short.stderr)")
        let long = try await cli.run(["run", "/translate fr Good morning"], environment: ["LOCAL_MODEL_URL": model.url, "COUNCIL_TIMEOUT": "30"])
        #expect(long.status == 0, "\(long.stderr)")
        #expect(long.stdout.contains("Bonjour"), "\(long.stdout)")
        let chat = try await cli.run(
            ["chat"], environment: ["LOCAL_MODEL_URL": model.url, "COUNCIL_TIMEOUT": "1", "LOG_LEVEL": "info"], stdin: "/translate fr Good morning\n/quit\n")
        await model.stop()
        #expect(chat.stdout.contains("did not answer"), "the reply says it: \(chat.stdout)")
        #expect(!chat.stderr.contains("warning"), "no warning on the screen: \(chat.stderr)")
        #expect(!chat.stdout.contains("warning"), "\(chat.stdout)")
    }

    /// Ctrl-C in `chat` stops the command running, not the session: the slow answer is not
    /// shown, "Cancelled." is, and the next command is answered.
    @Test func ctrlCInChatStopsTheCommandNotTheSession() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let model = try await FakeOpenAIServer.start(
            persona: .sequence([.slow(seconds: 30, then: .prose("too late")), .prose("Bonjour")]), model: "smollm2-135m-instruct")
        let chat = try await cli.run(
            ["chat"], environment: ["LOCAL_MODEL_URL": model.url], stdin: "/translate fr Good night\n/translate fr Good morning\n/quit\n", timeout: 60
        ) { pid in
            // Once the slow command is with the model: Ctrl-C.
            try await eventually("the first command reaches the model", safety: .seconds(30)) {
                model.requests().contains { $0.path.hasSuffix("/chat/completions") }
            }
            kill(pid, SIGINT)
        }
        await model.stop()
        #expect(chat.status == 0, "\(chat.stderr)")
        #expect(chat.stdout.contains("Cancelled."), "\(chat.stdout)")
        #expect(!chat.stdout.contains("too late"), "\(chat.stdout)")
        #expect(chat.stdout.contains("Bonjour"), "the session went on: \(chat.stdout)")
    }

    /// A backend that is configured is used as configured, even with a local model answering.
    @Test func aConfiguredBackendIsNeverReplaced() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let model = try await FakeOpenAIServer.start(persona: .prose("from the local model"))
        try await withFakeRheaTribunal { rhea in
            let output = try await cli.run(["run", "/translate fr Good morning"], environment: ["LOCAL_MODEL_URL": model.url, "TRIBUNAL_URL": rhea.url])
            #expect(output.status == 0, "\(output.stderr)")
            #expect(!output.stdout.contains("from the local model"), "\(output.stdout)")
        }
        #expect(model.requests().isEmpty, "the local model was not even asked for its models")
        await model.stop()
    }

    /// The README's first command against the real local model (llama.cpp, started with
    /// `scripts/local-model start`: `LocalModelServer`): a real answer, exit 0.
    ///
    /// Real time, across a process boundary, on a server the other suites share: it answers one
    /// request at a time, so the call may wait behind theirs. Its limit is raised as an operator
    /// would (`COUNCIL_TIMEOUT`): beside a CPU hog it took over the 20 s default once.
    @Test func theRealLocalModelAnswers() async throws {
        let url = try await LocalModelServer.url()
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let output = try await cli.run(
            ["run", "/translate fr Good morning"], environment: ["LOCAL_MODEL_URL": url, "COUNCIL_TIMEOUT": "100"], timeout: 120)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout.contains("Translation"), "\(output.stdout)")
        #expect(output.stdout.split(separator: "\n").count >= 2, "a heading and an answer: \(output.stdout)")
    }
}
