import RelayCore

extension Relay {
    /// The reply to a voice command when no transcription service is configured.
    static let voiceNotSetUp =
        "Voice notes are not set up on this relay: its operator can set TRANSCRIPTION_BASE_URL (an OpenAI-compatible /v1 endpoint) and TRANSCRIPTION_MODEL (see docs/voice.md). Until then, type the text."

    /// The command a voice note sent without one runs: the user's `/settings voice`, else the
    /// channel's, else `/transcribe`.
    func voiceAction(for event: Event) async throws -> VoiceAction {
        let user = try await store.settings(.user(team: event.team, user: event.user))
        let channel = user.voice == nil ? try await store.settings(.channel(team: event.team, channel: event.channel)) : Settings()
        return user.voice ?? channel.voice ?? .transcript
    }

    /// Whether the command needs the words of the event's voice note: `/transcribe` always; a
    /// command that takes text when none was typed (typed text wins over the voice note); a
    /// custom command whose template reads `{context}`.
    static func needsVoice(_ command: Command, event: Event, customs: [CustomCommand]) -> Bool {
        event.voice != nil && mayHear(command, customs: customs)
    }

    /// Whether the command would use a voice note's words if the event had one (`needsVoice`).
    static func mayHear(_ command: Command, customs: [CustomCommand]) -> Bool {
        switch command.kind {
        case .transcribe:
            return true
        case .translate, .action, .tribunal, .chain(.run):
            return command.text.isEmpty
        case .custom(let name):
            return command.text.isEmpty || customs.first { $0.name == name }?.template.contains("{context}") == true
        default:
            return false
        }
    }

    /// The event with the voice note its thread starts from (`ConversationReader.threadVoice`),
    /// when it has no clip and no replied-to message of its own; else as it is. Not asked with
    /// voice notes off: a thread under a voice clip then reads as any thread.
    func withThreadVoice(_ event: Event) async -> Event {
        guard transcriber != nil, event.voice == nil, event.repliedTo == nil, event.thread != nil, let reader = readers[event.platform],
            let clip = await reader.threadVoice(event)
        else { return event }
        var event = event
        event.voice = clip
        return event
    }

    /// Fetches the event's voice note and puts its transcript where a replied-to message's text
    /// goes, so typed text › the voice note › the thread, for commands, chains (`input`) and
    /// custom commands (`{context}`) alike. Every failure is a `RelayFailure` that says which it
    /// was and what to do; the audio stays in memory, and is dropped when this returns.
    func hear(_ request: inout RequestContext) async throws {
        guard let clip = request.event.voice else { return }
        guard let transcriber else { throw RelayFailure(Self.voiceNotSetUp) }
        let limits = transcriber.limits
        if let duration = clip.duration, duration > limits.maxSeconds {
            throw RelayFailure(
                "This voice note is \(Self.minutes(duration)) long; the relay transcribes voice notes up to \(Self.minutes(limits.maxSeconds)). Send a shorter one, or split it."
            )
        }
        if let size = clip.byteSize, size > limits.maxBytes {
            throw RelayFailure(VoiceFetchError.tooLarge(limit: limits.maxBytes, size: size).userMessage)
        }
        let event = request.event
        guard let reader = readers[event.platform] else {
            throw RelayFailure(VoiceFetchError.notSupported.userMessage)
        }
        // Room for the note before a byte of it is fetched: its size as the platform declared it
        // (else the cap), twice — its bytes, and room to spare for the buffers the download and
        // the streamed upload pass through (measured: 20 notes of 30 MB peak 37 MB above the
        // baseline) — and the download cut off there, so a size declared too small (a Matrix
        // client's `info.size`) cannot overdraw the budget.
        let fetchCap = min(clip.byteSize ?? limits.maxBytes, limits.maxBytes)
        let wait = configuration.voiceMemoryWait
        guard let held = await voiceMemory?.take(2 * fetchCap, waitingAtMost: wait) else {
            throw RelayFailure(
                "Too many voice notes are being heard on this relay at once: this one waited \(AgreementFooter.seconds(wait)) for room. Send it again in a minute."
            )
        }
        defer { voiceMemory?.give(held) }
        let audio: [UInt8]
        do throws(VoiceFetchError) {
            audio = try await reader.audio(clip, maxBytes: fetchCap)
        } catch {
            if case .unavailable(let reason) = error {
                throw RelayFailure(failures.voiceFailureMessage(error.userMessage, kind: "voice_fetch", detail: reason, event: event))
            }
            // Cut off at the size its message declared, not at the cap: said as the cap when the
            // file's own length is over the cap, else as the declared size it passed.
            if case .tooLarge(_, let size) = error, fetchCap < limits.maxBytes {
                if let size, size > limits.maxBytes { throw RelayFailure(VoiceFetchError.tooLarge(limit: limits.maxBytes, size: size).userMessage) }
                throw RelayFailure(
                    "This voice note is larger than the \(VoiceFetchError.megabytes(fetchCap)) its message declared; the relay stopped reading it. Send it again."
                )
            }
            throw RelayFailure(error.userMessage)
        }
        // The language the user (or channel) set, as the two letters speech services take.
        let language = (request.userSettings.lang ?? request.channelSettings.lang).flatMap(Language.lookup)
            .map { String($0.code.prefix { $0 != "-" && $0 != "_" }).lowercased() }
        let transcript: String
        do throws(TranscriptionError) {
            transcript = try await transcriber.transcribe(TranscriptionAudio(bytes: audio, mimeType: clip.mimeType, language: language))
        } catch {
            switch error {
            case .notAudio, .rateLimited, .cancelled:
                throw RelayFailure(error.userMessage)
            default:
                throw RelayFailure(failures.voiceFailureMessage(error.userMessage, kind: "transcription_\(error.label)", detail: error.reason, event: event))
            }
        }
        guard !transcript.isEmpty else {
            throw RelayFailure("No words could be heard in this voice note. Record it again, a little closer to the microphone.")
        }
        request.transcript = transcript
        request.event.repliedTo = transcript
    }

    /// `/transcribe`: the voice note's words, as the transcription service heard them.
    func transcribeCommand(_ request: RequestContext) -> Reply {
        guard let transcript = request.transcript else {
            return .error(
                "`/transcribe` needs a voice note: send one with the caption `/transcribe`, or reply `/transcribe` to one.")
        }
        let reply = Reply(kind: .result, title: "Transcript", body: transcript, isPrivate: request.isPrivate)
        record(request, command: "transcribe", reply: reply, elapsed: .zero)
        return reply
    }

    /// "45 s", "2 min", "5 min 30 s".
    static func minutes(_ seconds: Int) -> String {
        if seconds < 60 { return "\(seconds) s" }
        let rest = seconds % 60
        return rest == 0 ? "\(seconds / 60) min" : "\(seconds / 60) min \(rest) s"
    }
}
