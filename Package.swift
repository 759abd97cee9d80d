// swift-tools-version: 6.2
import PackageDescription

// Strict settings shared by every target.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// Code the tests run hundreds of thousands of times, optimized in debug builds too:
// - the council's estimator, on simulated panels of hundreds of claims: unoptimized it took 145 s
//   of both cores, holding the test pool long enough for other tests' deadlines to lapse;
//   optimized, 16 s;
// - the text escapers and splitters (RelayCore, and the renderers of the adapters whose own
//   scalar loops the property tests drive: Matrix, Mattermost, Teams, Google Chat, IRC, XMPP)
//   and the output-safety property tests (OutputSafetyTests) and fuzz targets that feed them
//   millions of strings: unoptimized, 6 of the unit group's CPU-minutes, most of it generic code
//   left unspecialised.
// Optimizing costs about five times the compile time, so only these: the adapters' tests build
// unoptimized (their compile fell from 177 to 75 CPU-seconds), and so do Slack, Discord and
// Telegram, whose property tests take about as long unoptimized, their escaping being mostly
// RelayCore's (the unit group: 116 s either way; with every adapter unoptimized, 193 s).
// `assert` is off under -O: these modules use `precondition`.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

// LLVM's linker (lld, in the Swift toolchain), not the default gold: the seven executables a build
// makes (the server, the test bundle, the benchmarks, the fuzzer) link in 1.9 s each instead of
// 4.3 (300 MB with debug info). A linker setting applies to every product whose targets include
// it: RelayCore, in every product, carries it.
let linkedWithLLD: [LinkerSetting] = [.unsafeFlags(["-use-ld=lld"])]

let package = Package(
    name: "rhea-relay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "rhea-relay", targets: ["rhea-relay"]),
        .library(name: "RelayCore", targets: ["RelayCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0", traits: [.defaults, "YAML"]),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Built for postgres-nio already; the store names its TLS configuration (sslmode).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Already built for swift-configuration's YAML trait; the deploy-file tests read YAML with it.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // The served Rhea API's bearer tokens (HS256 JWTs).
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        // X509 (already in the graph through jwt-kit): the tests make the certificates Google
        // publishes its keys as.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // The transcription request's multipart/form-data body (the audio file and its fields).
        .package(url: "https://github.com/vapor/multipart-kit", from: "4.7.1"),
        // The console's pages: Mustache templates, rendered on the server.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // Events, commands, chains, the runner, replies and the protocols at every edge. No I/O.
        // Logging and CoreMetrics are API packages (no I/O): only UntrustedNumber reports through them.
        .target(
            name: "RelayCore",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict + optimizedInDebug,
            linkerSettings: linkedWithLLD
        ),
        // The pipeline's stages, in the order a request walks them: admission (the inbox protocol,
        // the dispatcher, team queues), the run (Relay, the metered backend) and delivery (outbox
        // entries, the sender protocol, the outbox and its worker), with the Store protocol they
        // write through. Names no platform and no store engine.
        .target(
            name: "RelayPipeline",
            dependencies: [
                "RelayCore", "RelayHTTP",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                // System.coreCount (cgroup-aware), for the default number of runs in flight.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The one outbound HTTP transport: shared client, time limit, failure classification,
        // Retry-After. Every API client (backends, platforms) sits on it.
        .target(
            name: "RelayHTTP",
            dependencies: [
                "RelayCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Backends: the Rhea Tribunal HTTP client, the council and the transcription client.
        .target(
            name: "RelayTribunal",
            dependencies: [
                "RelayCore", "RelayHTTP",
                .product(name: "MultipartKit", package: "multipart-kit"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // The Store protocol's implementations: SQLite now, PostgreSQL later.
        .target(
            name: "RelayStore",
            dependencies: [
                "RelayCore", "RelayPipeline",
                // sqlite-nio brings SQLite itself: the store calls its C module (VaporCSQLite,
                // built as part of this product) directly, with statements prepared once and
                // operations batched by the store's own writer; its bind type is SQLiteNIO's.
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                // The shared store of several replicas (STORE_URL): PostgresClient, its pool,
                // LISTEN/NOTIFY.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
            ],
            swiftSettings: strict
        ),
        // Slack: request verification, payloads, Block Kit rendering, the Web API client and
        // Socket Mode. Knows Slack and RelayCore, no other platform.
        .target(
            name: "SlackAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // HTTPHeaders and HTTPMethod, for the Web API client's requests.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // WebSocketErrorCode, for sending Socket Mode's close frame.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Discord: interaction signatures (Ed25519), the gateway lifecycle, the REST rate limiter,
        // message rendering, command registration and interaction payloads. Knows Discord and
        // RelayCore, no other platform.
        .target(
            name: "DiscordAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                .product(name: "Crypto", package: "swift-crypto"),
                // HTTPResponseError (a rejected signature is a 401), HTTPFields, the interactions route.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The gateway's websocket, and its close codes.
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPHeaders and HTTPMethod, for the REST client's requests.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Matrix: a bot account on a homeserver, over the client-server API (/sync long polling,
        // m.notice replies sent under transaction ids).
        .target(
            name: "MatrixAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPMethod, for the client's requests.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The sync service.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // Telegram: the Bot API client and its rate limiter, webhook and long-polling updates,
        // inline mode, HTML rendering and command registration. Knows Telegram and RelayCore, no
        // other platform.
        .target(
            name: "TelegramAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                // Constant-time comparison of the webhook's secret token.
                .product(name: "Crypto", package: "swift-crypto"),
                // The webhook route and HTTPResponseError.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPHeaders and HTTPMethod, for the Bot API client's requests.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                // The long-polling service.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // Mattermost: slash commands (token-checked) answered at their response_url or through
        // REST v4, mentions and reactions over the websocket, Markdown rendering, command
        // registration. Knows Mattermost and RelayCore, no other platform.
        .target(
            name: "MattermostAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                // Constant-time comparison of slash-command tokens (by their SHA-256).
                .product(name: "Crypto", package: "swift-crypto"),
                // The slash-command route and HTTPResponseError.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // The websocket (`/api/v4/websocket`) and its close codes.
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                // HTTPHeaders and HTTPMethod, for the REST client's requests.
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // Microsoft Teams: the Bot Framework's messaging endpoint (each request's RS256 token
        // checked against the Bot Connector's published keys), replies and updates through the
        // Bot Connector with a client-credentials token, Adaptive Cards, the app package.
        // Knows Teams and RelayCore, no other platform.
        .target(
            name: "TeamsAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                // The Bot Connector's tokens: RS256 signatures against its JWK set.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // Google Chat: the HTTP endpoint app's events (each request's RS256 token checked
        // against Google's published certificates), answers in the event or through the Chat
        // API with a service-account token, cards v2. Knows Google Chat and RelayCore, no other
        // platform.
        .target(
            name: "GoogleChatAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform",
                // Google's tokens: RS256 signatures against x509 certificates; the service
                // account's grant, signed with its key.
                .product(name: "JWTKit", package: "jwt-kit"),
                // A throwaway key for the deploy files' test (`GoogleServiceAccount.madeUpExample`).
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // IRC: one socket to the server (TLS through NIOSSL), registration with SASL, paced
        // sends under the server's flood limits, lines within 512 bytes.
        .target(
            name: "IRCAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // XMPP: one session with the server (STARTTLS or direct TLS through NIOSSL), SCRAM,
        // rooms, corrections; the XML stream read incrementally and bounded.
        .target(
            name: "XMPPAdapter",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayPlatform", "CResolv",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
                // PBKDF2, SCRAM's salted password.
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        // The platform seam: what a chat platform module exposes (`ChatPlatform`) and the typed
        // configuration reads it uses. The server composes platforms from a list of these.
        .target(
            name: "RelayPlatform",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP",
                // AES-GCM for OutboxSecretBox: credentials that wait in the outbox are sealed.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // NIOTooManyBytesError, which a body over its route's limit throws.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The Rhea Tribunal API served by the relay: routes, validation in FastAPI's shape,
        // API keys (by digest) and HS256 bearer tokens, per-caller rate limits.
        .target(
            name: "RheaAPI",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayPlatform",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                // Bearer tokens: HS256 signatures checked by jwt-kit, claims read by RheaAPI.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The team admins' web console (docs/console.md): sign-in links, sessions, pages and charts.
        .target(
            name: "RelayConsole",
            dependencies: [
                "RelayCore", "RelayPipeline",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                // Sign-in links and sessions are HS256 JWTs; CSRF tokens are HMACs.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // The terminal adapter: plain-text rendering and the `chat` REPL.
        .target(name: "TerminalAdapter", dependencies: ["RelayCore", "RelayPipeline"], swiftSettings: strict),
        // Composition: configuration and building the relay from it.
        .target(
            name: "RelayServer",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform", "RelayTribunal", "RelayStore", "RheaAPI", "RelayConsole",
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // The HTTP/1 server's configuration (idle timeout) and the request read timeout's
                // channel handler, which sees HTTP parts.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                // SHA-256, to compare the admin token in constant time.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                // `rhea-relay doctor` reads the YAML file's own keys.
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        // glibc's `mallopt`, which Swift's Glibc module does not export: `serve` has large freed
        // blocks (voice notes' audio) returned to the system (docs/voice.md).
        .target(name: "CMallocTuning"),
        // SRV lookups through the system's resolver (libresolv), for XMPP's server discovery.
        .target(name: "CResolv", linkerSettings: [.linkedLibrary("resolv")]),
        .executableTarget(
            name: "rhea-relay",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayPlatform", "RelayServer", "RheaAPI", "SlackAdapter", "DiscordAdapter", "TelegramAdapter", "MatrixAdapter",
                "MattermostAdapter", "TeamsAdapter", "GoogleChatAdapter", "IRCAdapter", "XMPPAdapter", "TerminalAdapter", "CMallocTuning",
                // `store copy` names the stores themselves (the other commands reach them through RelayServer).
                "RelayStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // `serve` runs Swift concurrency on NIO's event loops.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        // Benchmarks (not tests): `swift run -c release council-bench`.
        .executableTarget(
            name: "council-bench",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTribunal", "RelayTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/CouncilBench",
            swiftSettings: strict
        ),
        // `swift run -c release tribunal-sim`: the learned reliability on simulated panels of judges.
        // The simulated world is a library of its own, so a test can run a small seeded panel.
        .target(
            name: "TribunalSimulation",
            dependencies: ["RelayTribunal", "RelayCore"],
            path: "Benchmarks/TribunalSimulation",
            swiftSettings: strict + optimizedInDebug
        ),
        .executableTarget(
            name: "tribunal-sim",
            dependencies: [
                "RelayTribunal", "RelayCore", "TribunalSimulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Benchmarks/TribunalSim",
            swiftSettings: strict
        ),

        // What the benchmarks that start `rhea-relay serve` share: the server's process, a
        // PostgreSQL of their own, percentiles.
        .target(
            name: "BenchSupport",
            dependencies: [
                "RelayCore", "RelayTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/BenchSupport",
            swiftSettings: strict
        ),

        // `swift run -c release slack-bench` (after building rhea-relay in release).
        .executableTarget(
            name: "slack-bench",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayTestSupport", "BenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/SlackBench",
            swiftSettings: strict
        ),

        // `swift run -c release console-bench` (after building rhea-relay in release): the
        // console's pages over a big ledger and history (docs/benchmarks.md).
        .executableTarget(
            name: "console-bench",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayStore", "RelayTestSupport", "BenchSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Benchmarks/ConsoleBench",
            swiftSettings: strict
        ),

        // `Benchmarks/request-trace.sh`: the source files one request crosses, by code coverage.
        .executableTarget(
            name: "request-trace",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayServer", "RelayTestSupport", "RelayTribunal", "SlackAdapter", "TelegramAdapter", "RequestTraceProfile",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/RequestTrace",
            swiftSettings: strict
        ),
        .target(name: "RequestTraceProfile", path: "Benchmarks/RequestTraceProfile"),

        // The decoders of untrusted input, their seeds and a deterministic mutator: used by
        // `rhea-fuzz` (`swift run -c release rhea-fuzz`) and, briefly, by the tests.
        .target(
            name: "RelayFuzz",
            dependencies: ["RelayCore", "RelayPipeline", "RelayTribunal", "RheaAPI", "SlackAdapter", "MattermostAdapter", "RelayTestSupport"],
            resources: [.copy("Seeds")],
            swiftSettings: strict + optimizedInDebug
        ),
        .executableTarget(
            name: "rhea-fuzz",
            dependencies: ["RelayFuzz", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: strict
        ),

        // The tags scripts/test groups the suites by (`.peers`, `.alone`).
        .target(name: "RelayTestTags", path: "Tests/RelayTestTags", swiftSettings: strict),
        // Fakes of external services, as real servers on 127.0.0.1.
        .target(
            name: "RelayTestSupport",
            dependencies: [
                // RelayStore: TemporaryDatabase, an SQLite store in a file that outlives a restart.
                "RelayCore", "RelayPipeline", "RelayPlatform", "RelayStore",
                .product(name: "Crypto", package: "swift-crypto"),
                // TestRSAKey: RS256 tokens signed in the tests (Teams' Bot Connector, Google Chat),
                // and the x509 certificates Google publishes its keys as.
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Hummingbird", package: "hummingbird"),
                // FakeTelegramBotAPI: a handler of its own in the HTTP/1 pipeline (FakePeerClosed).
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                // FakeMattermost closes its websockets with a close code.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // RawConnection: a TCP client that sends what no HTTP client would.
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                // PostgresTestServer: a real PostgreSQL cluster the tests start, and its databases.
                .product(name: "PostgresNIO", package: "postgres-nio"),
                // SynapseTestServer and MatrixTestUser: requests to a real Matrix homeserver.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/RelayTestSupport",
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RelayCoreTests",
            dependencies: ["RelayCore", "RelayPipeline", "RelayStore", "RelayTestSupport"],
            swiftSettings: strict
        ),
        // The pipeline's stages on their own (the dispatcher, the outbox, its worker, the
        // deliverer), against a recording platform and the manual clock: no server, no adapter.
        .testTarget(
            name: "RelayPipelineTests",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayStore", "RelayTestSupport", "RelayTestTags",
                // The terminal's renderings of a reply (`run --json`): the pipeline's output as a script reads it.
                "TerminalAdapter",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // What every adapter shares (connection leases, callback rules, body limits, secret files,
        // configuration values), without a server or a platform.
        .testTarget(
            name: "RelayPlatformTests",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayPlatform", "RelayStore", "RelayTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        // The served Rhea API's parts (rate limits, bearer tokens) on a clock the test names.
        .testTarget(
            name: "RheaAPITests",
            dependencies: ["RelayCore", "RheaAPI", "RelayTestSupport"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RelayConsoleTests",
            dependencies: [
                "RelayConsole", "RelayCore", "RelayPipeline", "RelayStore", "RelayTestSupport", "RelayTestTags",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RelayHTTPTests",
            dependencies: [
                "RelayHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RelayTribunalTests",
            dependencies: [
                "RelayCore", "RelayHTTP", "RelayTribunal", "RelayTestSupport", "RelayTestTags", "TribunalSimulation",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                // The transcription form's pieces are ByteBuffers.
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "SlackAdapterTests",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform", "SlackAdapter", "RelayTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "DiscordAdapterTests",
            dependencies: [
                "DiscordAdapter", "RelayCore", "RelayPipeline", "RelayTestSupport", "RelayPlatform",
                // Keys made in the tests, and RFC 8032's vectors signed through CryptoKit's API.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            resources: [.copy("Resources")],
            swiftSettings: strict
        ),
        .testTarget(
            name: "TelegramAdapterTests",
            dependencies: [
                "TelegramAdapter", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTestSupport", "RelayPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MatrixAdapterTests",
            dependencies: [
                "MatrixAdapter", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTestSupport", "RelayTestTags", "RelayPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MattermostAdapterTests",
            dependencies: [
                "MattermostAdapter", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTestSupport", "RelayPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "TeamsAdapterTests",
            dependencies: [
                "TeamsAdapter", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTestSupport", "RelayTestTags", "RelayPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "GoogleChatAdapterTests",
            dependencies: [
                "GoogleChatAdapter", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTestSupport", "RelayTestTags", "RelayPlatform",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "IRCAdapterTests",
            dependencies: [
                "IRCAdapter", "RelayCore", "RelayPipeline", "RelayPlatform", "RelayTestSupport", "RelayTestTags",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "XMPPAdapterTests",
            dependencies: ["XMPPAdapter", "RelayCore", "RelayPipeline", "RelayPlatform", "RelayTestSupport", "RelayTestTags"],
            swiftSettings: strict
        ),
        // Every platform's output-safety property tests (a million strings for Slack, 200 000 for
        // Discord, 100 000 for the rest): optimized like the escapers they drive, in a target of
        // their own so the adapters' other tests build unoptimized, at a fifth of the cost.
        .testTarget(
            name: "OutputSafetyTests",
            dependencies: [
                "RelayCore", "RelayTestSupport",
                "SlackAdapter", "DiscordAdapter", "TelegramAdapter", "MatrixAdapter", "MattermostAdapter", "TeamsAdapter", "GoogleChatAdapter", "IRCAdapter",
                "XMPPAdapter",
            ],
            swiftSettings: strict + optimizedInDebug
        ),
        .testTarget(
            name: "RelayServerTests",
            dependencies: [
                "RelayConsole", "RelayCore", "RelayPipeline", "RelayHTTP", "RelayPlatform", "RelayServer", "RelayStore", "RelayTestSupport", "RelayTestTags",
                "RelayTribunal",
                "RheaAPI",
                "SlackAdapter",
                "DiscordAdapter", "TelegramAdapter", "MatrixAdapter", "MattermostAdapter", "TeamsAdapter", "GoogleChatAdapter", "IRCAdapter", "XMPPAdapter",
                // HMAC-SHA256, to sign the served Rhea API's bearer tokens as a Rhea deployment does.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RelayFuzzTests",
            dependencies: ["RelayCore", "RelayPipeline", "RelayFuzz", "RelayTestSupport"],
            swiftSettings: strict + optimizedInDebug
        ),
        .testTarget(
            name: "RelayStoreTests",
            dependencies: ["RelayCore", "RelayPipeline", "RelayStore", "RelayTestSupport", "RelayTestTags"],
            swiftSettings: strict
        ),
        // The same scenarios against both backends, and the real local model server.
        .testTarget(
            name: "RelayIntegrationTests",
            dependencies: [
                "RelayCore", "RelayPipeline", "RelayHTTP", "RelayTribunal", "RelayStore", "RelayTestSupport",
                // The third parity backend: the Rhea API served by the relay itself.
                "RelayServer", "RheaAPI",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict
        ),
        .testTarget(
            name: "RheaRelayCLITests",
            dependencies: [
                "rhea-relay", "RelayCore", "RelayPipeline", "RelayServer", "RelayTestSupport", "RelayTestTags", "RelayPlatform",
                // SHA-256, to check the line `api-key new` prints against its key.
                .product(name: "Crypto", package: "swift-crypto"),
                // deploy/: compose and Kubernetes files are YAML; the probes are fetched over HTTP.
                .product(name: "Yams", package: "Yams"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: strict
        ),
    ]
)
