import RelayCore
import RelayTestSupport
import Testing

/// The fake Mattermost answers as Mattermost's reference client, mattermostdriver 7.3.2, expects:
/// login with a token (`GET /users/me`), a post (`POST /posts`, 201), a refused token (401 with
/// the `AppError` JSON, which the driver turns into its own exception), and the websocket's
/// authentication challenge, which the driver counts as done once `hello` (seq 0) arrives.
@Suite("The fake Mattermost, driven by mattermostdriver")
struct FakeMattermostDriverTests {
    static let script = #"""
        import asyncio, json, sys
        from mattermostdriver import Driver
        from mattermostdriver.websocket import Websocket

        port, token, channel = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        def options(token):
            return {"url": "127.0.0.1", "port": port, "scheme": "http", "basepath": "/api/v4", "token": token,
                    "verify": False, "timeout": 30, "keepalive": False, "debug": False}
        driver = Driver(options(token))
        driver.login()
        me = driver.users.get_user("me")
        post = driver.posts.create_post({"channel_id": channel, "message": "hello from the driver"})
        out = {"login": driver.client.userid, "me": me["id"], "username": me["username"], "post": post["id"], "message": post["message"]}
        try:
            Driver(options("wrongtoken000000000000000x")).users.get_user("me")
            out["refused"] = "no error"
        except Exception as error:
            out["refused"] = type(error).__name__
        frames = []
        socket = Websocket(driver.options, token)
        async def handler(message):
            frame = json.loads(message)
            frames.append(frame)
            if frame.get("event") == "hello":
                socket.disconnect()
        asyncio.run(asyncio.wait_for(socket.connect(handler), 60))
        out["frames"] = frames
        print("RESULT " + json.dumps(out))
        """#

    @Test func theDriverLogsInPostsAndAuthenticatesItsWebsocket() async throws {
        try await withFakeMattermost { mattermost in
            mattermost.addChannel("channel0000000000000000001")
            let run = try await PythonPeers.run(
                script: Self.script, arguments: [String(mattermost.port), FakeMattermost.botToken, "channel0000000000000000001"], timeout: .seconds(90))
            #expect(run.status == 0, "\(run.output)")
            let line = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("RESULT ") }, "\(run.output)")
            let result = try #require(JSONValue.parse(Array(line.dropFirst(7).utf8)))
            #expect(result["login"]?.stringValue == FakeMattermost.botUserID)
            #expect(result["me"]?.stringValue == FakeMattermost.botUserID)
            #expect(result["username"]?.stringValue == FakeMattermost.botUsername)
            #expect(result["message"]?.stringValue == "hello from the driver")
            #expect(mattermost.posts(channel: "channel0000000000000000001").map(\.message) == ["hello from the driver"])
            #expect(mattermost.requests("POST /posts").first?.header("authorization") == "Bearer \(FakeMattermost.botToken)")
            // 401 with Mattermost's error JSON: the driver's own exception for it.
            #expect(result["refused"]?.stringValue == "NoAccessTokenProvided")
            let frames = result["frames"]?.arrayValue ?? []
            #expect(frames.contains { $0["status"]?.stringValue == "OK" && $0["seq_reply"]?.intValue == 1 }, "\(frames)")
            #expect(frames.contains { $0["event"]?.stringValue == "hello" && $0["seq"]?.intValue == 0 }, "\(frames)")
            #expect(mattermost.requests("websocket authenticated").count == 1)
        }
    }
}
