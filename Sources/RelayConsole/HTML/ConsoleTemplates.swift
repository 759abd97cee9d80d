import Mustache

/// The console's Mustache templates, kept in the binary (no files to deploy beside it). Each
/// starts with `ConsoleHTML.pragma`; `{{{…}}}` shows only `TrustedHTML`.
enum ConsoleTemplates {
    /// Every page: the header with the team, the navigation and sign-out, then the page's body.
    static let layout = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Rhea Relay</title>
        <link rel="stylesheet" href="{{base}}console.css">
        </head>
        <body>
        <header>
        <p class="brand">Rhea Relay console</p>
        {{#signedIn}}
        <p class="who">{{team}} on {{platform}} · {{userName}}</p>
        <nav>{{#nav}}<a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a> {{/nav}}</nav>
        <form method="post" action="{{base}}signout" class="signout"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Sign out</button></form>
        {{/signedIn}}
        </header>
        <main>
        <h1>{{title}}</h1>
        {{{body}}}
        </main>
        </body>
        </html>
        """

    /// A refusal: what went wrong and what to do.
    static let refusal = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <p class="refusal" id="refusal">{{{message}}}</p>
        """

    /// The page a sign-in link opens: a button that signs in (a POST), so that a link preview
    /// fetching the page does not use the link up.
    static let signIn = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <p>Sign in as <strong>{{userName}}</strong> to the console of <strong>{{team}}</strong> on {{platform}}.</p>
        <form method="post" action="{{base}}signin">
        <input type="hidden" name="t" value="{{token}}">
        <button type="submit" id="signin">Sign in</button>
        </form>
        <p class="small">The link works once; your sign-in then lasts {{minutes}} minutes.</p>
        """

    /// The overview: activity, spend and the budget, last 30 days.
    static let overview = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <section aria-labelledby="budget-h">
        <h2 id="budget-h">Budget, {{monthName}}</h2>
        {{{budgetGauge}}}
        <p>{{budgetText}}</p>
        </section>
        <section aria-labelledby="commands-h">
        <h2 id="commands-h">Commands per day</h2>
        <p class="small">The last 30 days (UTC), from the runs this team's retention keeps: {{runTotal}} runs.</p>
        {{{commandsChart}}}
        </section>
        <section aria-labelledby="cost-h">
        <h2 id="cost-h">Cost per day by model</h2>
        <p class="small">The last 30 days: {{costTotal}} in all{{#estimatedNote}}; {{estimatedNote}}{{/estimatedNote}}.</p>
        {{{costChart}}}
        </section>
        <section aria-labelledby="failures-h">
        <h2 id="failures-h">Failures</h2>
        {{^hasFailures}}<p>No run failed in the last 30 days.</p>{{/hasFailures}}
        {{#hasFailures}}
        <table id="failures">
        <thead><tr><th scope="col">Why</th><th scope="col">Runs</th><th scope="col">Commands</th></tr></thead>
        <tbody>
        {{#failures}}<tr><td>{{reason}}</td><td>{{failed}}</td><td>{{commands}}</td></tr>
        {{/failures}}
        </tbody>
        </table>
        {{/hasFailures}}
        </section>
        """

    /// The ledger: a search box, then each fact-check with its votes, its mark and a form to mark it.
    static let ledger = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        {{#notice}}<p class="notice" id="notice">{{{notice}}}</p>{{/notice}}
        <form method="get" action="{{action}}" class="search" role="search">
        <label for="q">Claims holding every word</label>
        <input type="search" id="q" name="q" value="{{query}}" maxlength="700">
        <button type="submit">Search</button>
        </form>
        <p class="small">{{summary}}</p>
        {{^hasEntries}}<p>No fact-check matches.</p>{{/hasEntries}}
        {{#entries}}
        <article class="entry" id="entry-{{id}}" data-id="{{id}}" data-verdict="{{verdict}}">
        <h2>#{{id}} · {{date}}</h2>
        <p class="claim">{{claim}}</p>
        <p><strong>{{verdict}}</strong> · {{score}} · {{models}} models</p>
        <ul class="votes">{{#votes}}<li>{{model}}: {{said}}</li>{{/votes}}</ul>
        <p class="mark">{{#mark}}Marked {{.}}.{{/mark}}{{^mark}}Not marked.{{/mark}}</p>
        <form method="post" action="{{action}}/mark" class="markform">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="id" value="{{id}}">
        <input type="hidden" name="q" value="{{query}}">
        <label for="said-{{id}}">It is</label>
        <select id="said-{{id}}" name="verdict"><option value="true">true</option><option value="false">false</option><option value="partly">partly</option></select>
        <button type="submit" id="mark-{{id}}">Mark</button>
        </form>
        </article>
        {{/entries}}
        """

    /// Chains and custom commands: each editable, with the chat's own checks; import and export.
    static let chains = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        {{#notice}}<p class="notice" id="notice">{{{notice}}}</p>{{/notice}}
        {{#error}}<p class="refusal" id="error" role="alert">{{{error}}}</p>{{/error}}
        <section aria-labelledby="chains-h">
        <h2 id="chains-h">Chains</h2>
        {{^hasChains}}<p>No chains yet.</p>{{/hasChains}}
        {{#chains}}
        <form method="post" action="{{action}}/chains/save" class="chain" id="chain-{{name}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="name" value="{{name}}">
        <label for="source-{{name}}"><strong>{{name}}</strong> <span class="small">saved {{updated}} by {{by}}</span></label>
        <input type="text" id="source-{{name}}" name="source" value="{{source}}" maxlength="4000">
        <button type="submit">Save</button>
        </form>
        <form method="post" action="{{action}}/chains/delete" class="delete">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="name" value="{{name}}">
        <button type="submit">Delete {{name}}</button>
        </form>
        {{/chains}}
        <h3>New chain</h3>
        <form method="post" action="{{action}}/chains/save" id="new-chain">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="new-name">Name</label> <input type="text" id="new-name" name="name" value="{{kept.name}}" maxlength="64">
        <label for="new-source">Blocks</label> <input type="text" id="new-source" name="source" value="{{kept.source}}" maxlength="4000" placeholder="input > grammar > rewrite:formal > output">
        <button type="submit" id="save-new">Save</button>
        </form>
        <h3>Import and export</h3>
        <p><a href="{{action}}/chains/export" id="export">Export every chain</a> (<code>NAME = blocks</code> lines, as <code>/chain export</code> gives them).</p>
        <form method="post" action="{{action}}/chains/import" id="import">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="import-text">Lines to import</label>
        <textarea id="import-text" name="text" rows="4" maxlength="20000">{{kept.importText}}</textarea>
        <button type="submit">Import</button>
        </form>
        </section>
        <section aria-labelledby="commands-h">
        <h2 id="commands-h">Custom commands</h2>
        {{^hasCommands}}<p>No custom commands yet.</p>{{/hasCommands}}
        {{#hasCommands}}<table id="commands"><thead><tr><th scope="col">Command</th><th scope="col">Template</th><th scope="col"></th></tr></thead><tbody>
        {{#commands}}<tr><td>/{{name}}</td><td>{{template}}</td><td><form method="post" action="{{action}}/commands/remove"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="name" value="{{name}}"><button type="submit">Remove</button></form></td></tr>
        {{/commands}}</tbody></table>{{/hasCommands}}
        <form method="post" action="{{action}}/commands/add" id="new-command">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="command-name">Name</label> <input type="text" id="command-name" name="name" value="{{kept.commandName}}" maxlength="64">
        <label for="command-template">Template</label> <input type="text" id="command-template" name="template" value="{{kept.template}}" maxlength="2000" placeholder="Summarize for a manager: {input}">
        <button type="submit">Add</button>
        </form>
        </section>
        """

    /// The council: its models' learned records, their record over time, the reliability diagram.
    static let council = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <section aria-labelledby="judges-h">
        <h2 id="judges-h">What the council has learned</h2>
        {{^hasReport}}<p>The backend is the Rhea Tribunal gateway, which picks its own models: this relay keeps no record of them.</p>{{/hasReport}}
        {{#hasReport}}
        <table id="judges"><thead><tr><th scope="col">Model</th><th scope="col">Tier</th><th scope="col">Likely right</th><th scope="col">Verdicts</th><th scope="col">Weight</th></tr></thead><tbody>
        {{#judges}}<tr><td>{{model}}</td><td>{{tier}}</td><td>{{accuracy}} {{spread}}</td><td>{{judged}}</td><td>{{weight}}</td></tr>
        {{/judges}}</tbody></table>
        <p class="small">{{learnedFrom}}</p>
        {{/hasReport}}
        </section>
        <section aria-labelledby="record-h">
        <h2 id="record-h">Each model's record, week by week</h2>
        <p class="small">The share of each model's verdicts that people's marks confirmed, on this team's {{markedCount}} marked claims, counted to the end of each week (UTC, weeks from Monday).</p>
        {{{recordChart}}}
        </section>
        <section aria-labelledby="calibration-h">
        <h2 id="calibration-h">Calibration</h2>
        <p>Stated probability against how often the verdict was right, on {{calibrationCount}} marked claims; expected calibration error (ECE): <strong id="ece">{{ece}}</strong>.</p>
        {{{calibrationChart}}}
        <table id="bins"><thead><tr><th scope="col">Stated</th><th scope="col">Claims</th><th scope="col">Mean stated</th><th scope="col">Right</th></tr></thead><tbody>
        {{#bins}}<tr><td>{{range}}</td><td>{{count}}</td><td>{{stated}}</td><td>{{right}}</td></tr>
        {{/bins}}</tbody></table>
        </section>
        """

    /// The relay's connections: each platform's state, leases, last reply and error; the outbox.
    static let connections = """
        {{% CONTENT_TYPE: SCALAR_HTML}}
        <p>Replies waiting in the outbox: <strong id="depth">{{depth}}</strong>. Every team's admins see this page alike: it is the relay's.</p>
        {{#rows}}
        <section class="connection" id="platform-{{platform}}" data-platform="{{platform}}" data-pending="{{pending}}">
        <h2>{{platform}}</h2>
        <p class="state">{{state}}</p>
        {{#hasLeases}}<ul class="leases">{{#leases}}<li data-lease="{{name}}" data-holder="{{holder}}">{{name}}: held by {{holder}}{{#until}} until {{until}}{{/until}}</li>{{/leases}}</ul>{{/hasLeases}}
        <p>Last reply queued: {{lastQueued}} · waiting: {{pending}}</p>
        <p class="last-error">Last delivery error: {{lastError}}{{#lastErrorQueued}} (a reply queued {{lastErrorQueued}}){{/lastErrorQueued}}</p>
        </section>
        {{/rows}}
        {{#hasOtherLeases}}<h2>The relay's own leases</h2><ul class="leases">{{#otherLeases}}<li data-lease="{{name}}">{{name}}: held by {{holder}}{{#until}} until {{until}}{{/until}}</li>{{/otherLeases}}</ul>{{/hasOtherLeases}}
        """

    static let all: [String: String] = [
        "layout": layout, "refusal": refusal, "signin": signIn, "overview": overview, "ledger": ledger, "chains": chains, "council": council,
        "connections": connections,
    ]

    /// The templates, parsed once (after the content type their pragma names is registered).
    static let library: MustacheLibrary = {
        _ = ConsoleHTML.registered
        var library = MustacheLibrary()
        for (name, text) in all {
            // A template that does not parse is a programming error the tests catch at once.
            try! library.register(text, named: name)
        }
        return library
    }()

    /// `template` rendered with `object`'s values.
    static func render(_ template: String, _ object: Any) -> String {
        library.render(object, withTemplate: template) ?? ""
    }
}
