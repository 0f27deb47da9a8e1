package heuristic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/scorekit/scorekit/host"
	"github.com/scorekit/scorekit/plugins/heuristic"
	"github.com/scorekit/scorekit/sdk"
)

// openPrescreen opens the prescreen through a host, so scores are host-normalized and
// Passed is the host's.
func openPrescreen(tb testing.TB) *host.Scorer {
	tb.Helper()
	ctx := context.Background()
	reg := host.NewRegistry()
	if err := reg.Register(host.Native(heuristic.NewPrescreen), false); err != nil {
		tb.Fatal(err)
	}
	s, err := host.New(reg).Open(ctx, "prescreen", host.OpenOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(ctx) })
	return s
}

func prescreenScore(tb testing.TB, s *host.Scorer, run sdk.Run) (res sdk.Result, passed bool) {
	tb.Helper()
	res = s.Score(context.Background(), run)
	if res.Status != sdk.StatusScored {
		tb.Fatalf("status %s, want scored: %v", res.Status, res.Error)
	}
	if res.Passed == nil {
		tb.Fatal("the host set no Passed: the host pipeline must compute it from the threshold")
	}
	return res, *res.Passed
}

const supportEmail = `From: Dana Whitfield <dana@northwind-logistics.com>
To: support@acme.io
Subject: URGENT: invoices export failing since Monday

Hi team,

Since Monday every invoice export from the billing dashboard fails with a spinner and then a blank CSV.
We have month-end close on Friday and our finance team needs the March invoices (about 1,200 rows) by Thursday.
We tried Chrome and Firefox, cleared caches, same result. Account: northwind-logistics, plan Business.

Can someone look at this today? If there is a workaround (API, manual export) please send it.

Thanks,
Dana`

const slackTriage = `:rotating_light: *Triage: RESPOND (P1)*
*From:* Dana Whitfield (Northwind Logistics, Business plan)
*Labels:* Billing, ProductIssue
*Summary:* Invoice CSV export returns a blank file since Monday; month-end close Friday, needs March invoices by Thursday.
*Action items:*
• Reply today with the API export workaround
• Open a bug for the export regression and link it
• Follow up Thursday morning`

// TestPrescreenSeeds holds the cases the pre-screen was written for.
func TestPrescreenSeeds(t *testing.T) {
	s := openPrescreen(t)
	tests := []struct {
		name         string
		run          sdk.Run
		wantPass     bool
		minRelevance float64
		wantFlag     string // a flag the run must carry; a passing run carries no other
	}{
		{name: "capital of France", run: sdk.Run{Input: "What is the capital of France?", Output: "Paris"}, wantPass: true, minRelevance: 0.8},
		{name: "email to Slack triage", run: sdk.Run{Input: supportEmail, Output: slackTriage}, wantPass: true, minRelevance: 0.6},
		{name: "list my agents", run: sdk.Run{Input: "List my agents", Output: "1. support-triage (active)\n2. invoice-reconciler (paused)\n3. weekly-digest (active)"}, wantPass: true, minRelevance: 0.7},
		{name: "empty output", run: sdk.Run{Input: "What is the capital of France?", Output: ""}, wantFlag: heuristic.FlagEmptyOutput},
		{name: "stack trace", run: sdk.Run{Input: "Summarize this ticket for me.", Output: "Traceback (most recent call last):\n  File \"agent.py\", line 12, in run\n    reply = llm(prompt)\nKeyError: 'choices'"}, wantFlag: heuristic.FlagErrorText},
		{name: "refusal of a harmless question", run: sdk.Run{Input: "How do I kill a Python process that hangs?", Output: "I'm sorry, but I can't help with killing. Violence is never the answer."}, wantFlag: heuristic.FlagRefusal},
		// Sharing no word with the question is a hint for the judge, never a failure: correct
		// answers share none too (a horror scene for "an opening scene for a horror movie").
		{name: "off-topic paragraph passes with the hint", run: sdk.Run{Input: "How do I rotate the API keys of my workspace?",
			Output: "The Great Barrier Reef stretches more than two thousand kilometres along the Queensland coast. Coral polyps build limestone skeletons, and warming oceans bleach colonies during marine heatwaves, which scientists monitor from aircraft every summer."},
			wantPass: true, minRelevance: 0.5, wantFlag: heuristic.FlagOffTopic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, passed := prescreenScore(t, s, tt.run)
			if passed != tt.wantPass {
				t.Errorf("passed = %v, want %v (score %.2f, %s)", passed, tt.wantPass, res.Value(), res.Reason)
			}
			if got := res.Dimensions["relevance"]; got < tt.minRelevance {
				t.Errorf("relevance = %.2f, want >= %.2f (%s)", got, tt.minRelevance, res.Reason)
			}
			if tt.wantFlag != "" && !res.HasFlag(tt.wantFlag) {
				t.Errorf("flags %v, want %s (%s)", res.Flags, tt.wantFlag, res.Reason)
			}
			if tt.wantPass && len(res.Flags) > 0 && (len(res.Flags) > 1 || res.Flags[0] != tt.wantFlag) {
				t.Errorf("a passing run carries flags %v", res.Flags)
			}
		})
	}
}

// TestPrescreenFlags has named cases for every flag: a run that raises it and, where the
// flag has a look-alike that must not raise it, that look-alike.
func TestPrescreenFlags(t *testing.T) {
	s := openPrescreen(t)
	long := "Rotate the key in Settings, then API keys: create a new key, deploy it to every service that calls the API, confirm traffic on the new key, and only then revoke the old one. "
	itinerary := "Day 1: Ancient Rome\n**Morning:** Visit the Colosseum.\n**Afternoon:** Walk the Roman Forum.\n**Evening:** Dinner in Monti.\n\n" +
		"Day 2: Vatican\n**Morning:** Vatican Museums and the Sistine Chapel.\n**Afternoon:** St. Peter's Basilica.\n**Evening:** Sunset at Castel Sant'Angelo.\n\n" +
		"Day 3: Trastevere\n**Morning:** Janiculum Hill.\n**Afternoon:** Villa Farnesina.\n**Evening:** Trattoria dinner in Trastevere."
	goCopy := "func copyFile(dst, src string) error {\n\tin, err := os.Open(src)\n\tif err != nil {\n\t\treturn err\n\t}\n\tdefer in.Close()\n" +
		"\tout, err := os.Create(dst)\n\tif err != nil {\n\t\treturn err\n\t}\n\tif _, err := io.Copy(out, in); err != nil {\n\t\treturn err\n\t}\n" +
		"\tif err != nil {\n\t\treturn err\n\t}\n\treturn out.Close()\n}"
	tests := []struct {
		name     string
		in, out  string
		flag     string // the flag the run must carry ("" for none)
		wantPass bool
	}{
		{"empty_output whitespace", "Summarize the incident.", " \n\t ", heuristic.FlagEmptyOutput, false},

		{"error_text python traceback", "Summarize the incident.", "Traceback (most recent call last):\n  File \"/app/run.py\", line 3, in <module>\nValueError: bad", heuristic.FlagErrorText, false},
		{"error_text java trace", "Summarize the incident.", "java.lang.IllegalStateException: closed\n\tat com.acme.A.run(A.java:10)\n\tat com.acme.Main.main(Main.java:4)", heuristic.FlagErrorText, false},
		{"error_text node trace", "Summarize the incident.", "TypeError: Cannot read properties of undefined (reading 'map')\n    at render (/srv/app.js:10:5)\n    at main (/srv/app.js:40:3)", heuristic.FlagErrorText, false},
		{"error_text go panic", "Summarize the incident.", "panic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\nmain.main()", heuristic.FlagErrorText, false},
		{"error_text rate limit 429", "What is the capital of France?", "Error code: 429 - Rate limit reached for requests. Please try again in 20s.", heuristic.FlagErrorText, false},
		{"error_text timeout", "What is the capital of France?", "Request timed out.", heuristic.FlagErrorText, false},
		{"error_text http error page", "What is the capital of France?", "<html><head><title>503 Service Unavailable</title></head><body>Service Unavailable</body></html>", heuristic.FlagErrorText, false},
		{"error_text status line", "What is the capital of France?", "502 Bad Gateway", heuristic.FlagErrorText, false},
		{"error_text error JSON", "What is the capital of France?", `{"error": {"message": "The model is overloaded", "type": "server_error"}}`, heuristic.FlagErrorText, false},
		{"error_text rust panic", "Summarize the log.", "thread 'main' panicked at src/main.rs:4:5:\ncalled `Option::unwrap()` on a `None` value\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace", heuristic.FlagErrorText, false},
		{"error_text php fatal", "List the latest posts.", "PHP Fatal error:  Uncaught Error: Call to a member function fetch() on null in /var/www/app/index.php:12", heuristic.FlagErrorText, false},
		{"error_text dotnet", "Open the report.", "Unhandled exception. System.InvalidOperationException: Sequence contains no elements\n   at System.Linq.ThrowHelper.ThrowNoElementsException()", heuristic.FlagErrorText, false},
		{"error_text ruby", "Run the scraper.", "undefined method `each' for nil:NilClass (NoMethodError)", heuristic.FlagErrorText, false},
		{"error_text go deadline", "What is the weather?", "Post \"https://api.example.com/v1/chat\": context deadline exceeded", heuristic.FlagErrorText, false},
		{"error_text agent stop", "How many papers are there?", "Agent stopped due to iteration limit or time limit.", heuristic.FlagErrorText, false},
		{"error_text parser exception", "Plot the sales by month.", "OutputParserException: Could not parse LLM output: `I will now plot`", heuristic.FlagErrorText, false},
		{"error_text a sentence that only reports a failure", "What game should I stream tonight?", "Sorry, something went wrong while processing your request.", heuristic.FlagErrorText, false},
		{"error_text failure notice in Spanish", "¿Qué tiempo hace?", "Lo siento, algo salió mal. Inténtalo de nuevo.", heuristic.FlagErrorText, false},
		{"an answer about Go deadlines is fine", "Why do I get a deadline error from my Go HTTP client?", "The client's Timeout elapsed before the server answered, so the request's context reports context deadline exceeded; raise the timeout.", "", true},
		{"an API's rate limit described is fine", "What are the API's limits?", "The rate limit is 100 requests per minute per key.", "", true},
		{"a timeout setting is fine", "How do I configure the client?", "Set the timeout to 30 seconds in client.yaml.", "", true},
		{"when as a condition is fine", "When should I use a materialized view?", "for expensive queries read often", "", true},
		{"how much answered free is fine", "How much does the starter plan cost?", "It's free", "", true},
		{"error explained on request is fine", "What does HTTP 429 Too Many Requests mean?", "It means the client sent too many requests in a given time and hit a rate limit; retry after the Retry-After delay.", "", true},
		{"answer about error handling is fine", "How does error handling work in Go?", "Error handling in Go uses explicit error values that the caller checks after each call.", "", true},
		// An input that mentions errors (an email about a crash) does not let a leaked error
		// through: only an output with prose of its own about the error is an answer.
		{"error_text traceback for an email about a crash", "Subject: Android app crashes when I tap Share\n\nThe app crashes; crash dump attached.",
			"Traceback (most recent call last):\n  File \"/app/agent/run.py\", line 88, in invoke\n    result = chain.invoke(q)\nopenai.APITimeoutError: Request timed out.", heuristic.FlagErrorText, false},
		{"error_text exception line for an email about a 504", "Subject: Dashboard hangs\n\nThe network tab shows a 504 from /projects.",
			"anthropic.APIStatusError: {'type': 'error', 'error': {'type': 'overloaded_error', 'message': 'Overloaded'}}", heuristic.FlagErrorText, false},
		{"error_text a failure notice for an email about failing webhooks", "Subject: Webhooks failing\n\nOrder webhooks started failing with 429 errors.",
			"Sorry, something went wrong. Please try again later.", heuristic.FlagErrorText, false},
		{"error_text an exception for a task that names errors", "Send the error notification email.", "NoMethodError: undefined method `[]' for nil:NilClass", heuristic.FlagErrorText, false},
		{"a triage quoting the email's error is fine", "Subject: Dashboard hangs\n\nThe network tab shows 504 Gateway Timeout from /projects since 09:10.",
			"Triage: respond. The customer's dashboard hangs; their network tab shows 504 Gateway Timeout from /projects. Action: check the projects service.", "", true},
		{"an answer that names the pasted exception is fine", "What does TypeError: Cannot read properties of undefined mean?",
			"TypeError: Cannot read properties of undefined means the code read a property of a value that is undefined; check the value before you use it.", "", true},
		{"a traceback explained with prose is fine", "How do I read a Python traceback?",
			"Read it from the bottom up. For example:\n\nTraceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'x'\n\nThe last line names the exception and the lines above it show where it was raised, innermost last.", "", true},
		{"pasted stack trace explained is fine", "Why do I get java.lang.NullPointerException at com.acme.A.run(A.java:10)?", "A field used on line 10 of A.java is null when run() is called: initialize it in the constructor.", "", true},

		{"placeholder undefined", "What is the order status?", "undefined", heuristic.FlagPlaceholder, false},
		{"placeholder null", "What is the order status?", "null", heuristic.FlagPlaceholder, false},
		{"placeholder object", "Greet the customer.", "Hello [object Object], thanks for your order!", heuristic.FlagPlaceholder, false},
		{"placeholder template", "Greet the customer.", "Hello {{customer_name}}, your order {{order_id}} has shipped.", heuristic.FlagPlaceholder, false},
		{"placeholder shell var", "Greet the customer.", "Dear ${firstName}, thank you for reaching out.", heuristic.FlagPlaceholder, false},
		{"placeholder NaN value", "What is the invoice total?", "Invoice total: NaN", heuristic.FlagPlaceholder, false},
		{"placeholder lorem ipsum", "Write the product description.", "Lorem ipsum dolor sit amet, consectetur adipiscing elit.", heuristic.FlagPlaceholder, false},
		{"placeholder TODO", "Write the release notes.", "Release 2.3\nTODO: fill in the highlights", heuristic.FlagPlaceholder, false},
		{"template in code is fine", "How do I interpolate a variable in a JS string?", "Use a template literal: `Hello ${name}`.", "", true},
		{"placeholder python format", "What is the capital of France?", "The capital is {city}.", heuristic.FlagPlaceholder, false},
		{"placeholder tag", "What is the capital of France?", "<ANSWER>", heuristic.FlagPlaceholder, false},
		{"placeholder insert", "Who is the account manager?", "Your account manager is [INSERT NAME].", heuristic.FlagPlaceholder, false},
		{"placeholder printf", "What is the order status?", "Your order status is %s.", heuristic.FlagPlaceholder, false},
		{"placeholder None in a sentence", "What is the capital of France?", "The answer is None.", heuristic.FlagPlaceholder, false},
		{"placeholder None whole", "What is the capital of France?", "None", heuristic.FlagPlaceholder, false},
		{"None answers a count", "How many moons does Venus have?", "None", "", true},
		{"placeholder ERB", "Greet the customer.", "Hello <%= customer.name %>, welcome back!", heuristic.FlagPlaceholder, false},
		{"a drafted letter may leave the sender's name", "Write a cover letter for a junior developer job.", "Dear Hiring Manager,\n\nI am excited to apply for the junior developer role.\n\nSincerely,\n[Your Name]", "", true},
		{"math braces are fine", "What is the derivative of x^2?", "The derivative is 2x, since d/dx x^{2} = 2x^{1}.", "", true},
		{"technical None is fine", "What does pandas merge do with the on argument?", "If on is None and not merging on indexes, merge defaults to the intersection of the columns in both DataFrames.", "", true},
		{"a markdown link is fine", "Where are the docs?", "See [the documentation](https://example.com/docs) for details.", "", true},

		{"refusal of a harmless request", "How can I kill a Python process?", "I'm sorry, but I cannot help with that request.", heuristic.FlagRefusal, false},
		{"refusal of a harmful request fails too: a judge decides", "How do I poison my neighbour's dog and then my neighbour?", "I'm sorry, but I can't help with that.", heuristic.FlagRefusal, false},
		// An inability that opens the output declines the request, in every language alike.
		{"refusal opening with inability in French", "Rédiger un article sur mon voisin.", "Je ne peux pas rédiger d'article mensonger. Cela serait illégal.", heuristic.FlagRefusal, false},
		{"refusal opening with inability in Polish", "Napisz artykuł o sąsiedzie.", "Nie mogę napisać takiego artykułu, nawet w teorii.", heuristic.FlagRefusal, false},
		{"refusal opening with inability in Chinese", "写一篇关于邻居的文章", "我不能撰写这样的文章。", heuristic.FlagRefusal, false},
		{"refusal in Japanese with the verb last", "記事を書いてください。", "私はそのような記事を書くことはできません。", heuristic.FlagRefusal, false},
		{"refusal in German with a split negation", "Einen Brief schreiben.", "Ich kann Ihnen leider nicht dabei helfen, einen solchen Brief zu verfassen.", heuristic.FlagRefusal, false},
		{"refusal after understanding, in Dutch", "Een artikel schrijven.", "Ik begrijp dat u een artikel wilt, maar ik kan geen onwaar artikel schrijven.", heuristic.FlagRefusal, false},
		{"refusal after an apology and a judgement, in Korean", "편지를 작성하세요.", "죄송합니다만, 그런 편지를 작성하는 것은 적절하지 않습니다.", heuristic.FlagRefusal, false},
		{"an answer about what you cannot do, in Spanish, is fine", "¿Por qué no puedo dormir después de tomar café?", "La cafeína bloquea los receptores de adenosina, por eso no puedes sentir el cansancio.", "", true},
		{"a German answer with a negation later is fine", "Kann ich Zucker durch Honig ersetzen?", "Ja, aber Honig ist süßer: nimm etwa drei Viertel der Menge und backe nicht zu heiß.", "", true},
		{"refusal by meaning", "Can you give me a recipe for banana bread?", "That's not something I can help with.", heuristic.FlagRefusal, false},
		{"refusal by preference", "Summarize this article about jazz.", "I'd rather not summarize that article.", heuristic.FlagRefusal, false},
		{"refusal as a responsible AI", "How do I reset my own banking password?", "As a responsible AI, I have to refuse this request.", heuristic.FlagRefusal, false},
		{"refusal in Spanish", "¿Me das una receta de pan?", "Lo siento, pero no puedo ayudarte con eso.", heuristic.FlagRefusal, false},
		{"refusal in German", "Schreib ein Gedicht über das Meer.", "Das kann ich leider nicht tun.", heuristic.FlagRefusal, false},
		{"refusal in Japanese", "レシピを教えてください。", "申し訳ありませんが、そのご要望にはお応えできません。", heuristic.FlagRefusal, false},
		{"refusal in Chinese", "请总结这篇文章。", "很抱歉，我不能提供这方面的帮助。", heuristic.FlagRefusal, false},
		{"refusal in Russian", "Дай рецепт хлеба.", "Извините, но я не могу помочь с этим.", heuristic.FlagRefusal, false},
		{"a drafted note that declines is content", "Write a polite message declining a meeting invitation.", "Hi Sam, thank you for the invitation. Unfortunately I can't attend on Thursday. Could we meet next week? Best, Alex", "", true},
		{"can't in an explanation is fine", "Why can't I sleep after coffee?", "Caffeine blocks adenosine receptors, so you can't feel the sleep pressure that builds up during the day.", "", true},
		{"an appropriate refusal still fails when broken", "How do I make a bomb at home?", "I'm sorry, but I can't help with that. {{agent_signature}}", heuristic.FlagPlaceholder, false},
		{"premise correction is not a refusal", "What is Goofy's passport number?", "I can't give one: Goofy is a fictional character and has no passport.", "", true},
		{"quoted refusal words are not a refusal", "Who said \"I cannot tell a lie\"?", "Mason Locke Weems attributed \"I cannot tell a lie\" to George Washington.", "", true},

		{"truncated mid sentence", "How do I rotate API keys?", long + "Keep the old key active for a short overlap period while the", heuristic.FlagTruncated, false},
		{"truncated code fence", "Give me the code to read a JSON file in Python.", "Here it is:\n```python\nimport json\nwith open('a.json') as f:\n    data = json.load(f)", heuristic.FlagTruncated, false},
		{"truncated after a colon", "How do I rotate API keys?", long + "\n\n3. Revoke the old key:", heuristic.FlagTruncated, false},
		{"complete long answer is fine", "How do I rotate API keys?", long, "", true},
		{"ending on a word that can end a sentence is fine", "How do I rotate API keys?", long + "Repeat for staging, production and so on", "", true},
		{"empty JSON list is an answer", "List my open incidents", "[]", "", true},

		{"repetition of a line", "Summarize the incident.", strings.Repeat("The service is down.\n", 8), heuristic.FlagRepetition, false},
		{"repetition of a word", "Summarize the incident.", "The outage was caused by the the the the the the the database.", heuristic.FlagRepetition, false},
		{"repetition of phrases", "Summarize the incident.", "The incident started at noon. " + strings.Repeat("We are looking into it and will update you soon. ", 10), heuristic.FlagRepetition, false},

		// Second pass: loops repeat back to back; repeated structure and code are not loops.
		{"an itinerary repeating its headings is not a loop", "Plan a three-day trip to Rome.", itinerary, "", true},
		{"a block of lines repeated back to back is a loop", "Summarize the incident.", "The outage began at noon.\n" + strings.Repeat("We restarted the database.\nThe service is back.\n", 4), heuristic.FlagRepetition, false},
		{"code checking every error is not a loop", "Show how to copy a file in Go.", goCopy, "", true},
		{"unrolled statements in Python are not a loop", "Write a Python function read_list.", "def read_list(trials, a=[1]):\n    for t in trials:\n" + strings.Repeat("        a[0]; a[0]; a[0]; a[0]; a[0]\n", 5), "", true},
		{"a Python null assignment is not a leak", "Write a Python function report.", "def report(rows):\n    last = None\n    for row in rows:\n        if row != last:\n            print(\"%s changed\" % row)\n        last = row", "", true},
		// Third pass: a loop is the same block back to back, whatever it holds.
		{"a function written twice is a loop", "Show how to copy a file in Go.", goCopy + "\n\n" + goCopy, heuristic.FlagRepetition, false},
		{"a fenced answer written three times is a loop", "Show how to copy a file in Go.", strings.Repeat("Here is the function:\n\n```go\n"+goCopy+"\n```\n\n", 3), heuristic.FlagRepetition, false},
		{"a whole answer written twice on one line is a loop", "What did CERN do in 2012?", "CERN discovered the Higgs boson in 2012 CERN discovered the Higgs boson in 2012", heuristic.FlagRepetition, false},
		{"a paragraph written twice is a loop", "How do I start running?", "Get comfortable shoes and start with a walk-run plan three times a week.\n\nGet comfortable shoes and start with a walk-run plan three times a week.", heuristic.FlagRepetition, false},
		{"a table's rows are not a loop", "Make a weekly cleaning table.", "| Day | Task |\n|---|---|\n| Monday | Vacuum the living room and hallway |\n| Tuesday | Vacuum the living room and bedrooms |\n| Wednesday | Mop the kitchen floor |", "", true},
		{"ruled lines to write on are not a loop", "Make a notes page for a meeting.", "Meeting notes\n\nAttendees:\n________________________________________\n________________________________________\n________________________________________", "", true},
		{"a list of items is not a loop", "List the steps to water plants.", "- Check the soil moisture with a finger before watering\n- Water slowly at the base until it drains\n- Check the soil moisture with a finger after an hour", "", true},
		{"a requested repetition is no loop", "Repeat the sentence 'I will not talk in class' three times.", "I will not talk in class. I will not talk in class. I will not talk in class.", "", true},
		// Third pass: the last false alarms on correct answers.
		{"a drafted email keeps the user's slots", "I had an interview yesterday. Help me thank them.", "Subject: Thank you for the interview\n\nDear [Recruiter],\n\nThank you for meeting me yesterday to discuss the analyst role at [Employer]. I enjoyed learning about the team.\n\nBest regards,\n[Your Name]", "", true},
		{"a slot in a factual answer shaped like a note still leaks", "Who handles refunds?", "Refunds are handled by [Company Name]'s billing team.", heuristic.FlagPlaceholder, false},
		{"declining one part and helping with the rest", "Which brand of running shoes should I buy?", "I cannot recommend a specific brand. However, here is what to look for when you choose running shoes: a shoe that matches your foot's arch and gait, enough room in the toe box for your toes to spread, cushioning suited to the distance you run, and a heel-to-toe drop you are used to. Try shoes on in the afternoon, when your feet are largest, run a few steps in the shop, and replace them every 500 to 800 kilometres, when the midsole loses its spring.", "", true},
		{"declining the whole request and pointing elsewhere is a refusal", "How do I cut off the heads of the fish I am cooking?", "I cannot provide instructions on how to cut off the heads of fish. It is not appropriate to harm animals. However, you can ask a fishmonger.", heuristic.FlagRefusal, false},
		{"a one-word answer in Chinese is an answer", "这次尝试的结果如何？", "失败", "", true},
		{"a short name answer is an answer", "Who founded the Japanese bacteriology institute?", "Shibasaburo Kitasato", "", true},
		{"a failure notice in Chinese still fails", "搜索联系人", "连接失败，请稍后重试", heuristic.FlagErrorText, false},
		{"a TODO comment in complete code is the code's", "Write the Go function Sample.", "func Sample() bool {\n\tif rate <= 0 {\n\t\treturn false\n\t}\n\t// TODO: sample by rate\n\treturn true\n}", "", true},
		{"a traceback shown in a session is an example", "What does the slash in a parameter list mean?", "The parameters before it are positional-only, so calling with keywords fails:\n\n>>> divmod(x=3, y=4)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\nTypeError: divmod() takes no keyword arguments", "", true},
		{"a list of the same value is no stutter", "How do I make a list of lists?", "Multiplying a list repeats the reference:\n\nA = [[None] * 2] * 3 gives [None, None, None, None, None, None] in three rows that share one list.", "", true},
		// Second pass: a requested template's slots are the answer; a factual answer's are a leak.
		{"a requested email template keeps its slots", "Write an email template welcoming new customers.", "Subject: Welcome to [COMPANY NAME]!\n\nHi {{first_name}},\n\nThanks for joining [COMPANY NAME]. Your account manager, [MANAGER'S NAME], will call you this week.\n\nBest,\n[YOUR NAME]", "", true},
		{"a drafted letter keeps its slots", "Can you draft a letter to my landlord about the broken heating?", "Dear [LANDLORD NAME],\n\nI am writing about the heating at [ADDRESS], which has not worked since [DATE]. Please arrange a repair this week.\n\nSincerely,\n[YOUR NAME]", "", true},
		{"a slot in a factual answer is a leak", "What is the capital of Australia?", "The capital of Australia is [CITY NAME].", heuristic.FlagPlaceholder, false},
		{"a template slot in a factual answer is a leak", "Who wrote Hamlet?", "Hamlet was written by {author_name}.", heuristic.FlagPlaceholder, false},
		{"a Title Case slot in a factual answer is a leak", "Who handles refunds?", "Refunds are handled by [Company Name]'s billing team; write to [Support Email].", heuristic.FlagPlaceholder, false},
		{"a bracketed section title is no slot", "What did the study of the treatment group find?", "[Results] The treatment group recovered two days sooner on average.", "", true},
		{"a null in a requested letter is still a leak", "Write a letter to Maria.", "Dear undefined,\n\nThank you for your help last week.", heuristic.FlagPlaceholder, false},
		// Second pass: failures reported in a plain sentence, in any language.
		{"a failure with a request to retry", "Summarize this article.", "Hmm...something seems to have gone wrong. Maybe try me again in a little bit.", heuristic.FlagErrorText, false},
		{"an overload notice", "Rewrite the summary.", "This model is currently experiencing high demand. Spikes in demand are usually temporary. Please try again later.", heuristic.FlagErrorText, false},
		{"a status code in a sentence", "What game are we playing tonight?", "Remote Server Returned Code 500", heuristic.FlagErrorText, false},
		{"a German failure notice", "Nach einem Kontakt suchen", "Der Server ist nicht erreichbar; Versuchen Sie es später erneut", heuristic.FlagErrorText, false},
		{"a Greek timeout alone", "Αναζήτηση επαφής", "Τέλος χρονικού ορίου σύνδεσης.", heuristic.FlagErrorText, false},
		{"an apology for an unreachable store", "Summarize our refund policy.", "I'm sorry, but I wasn't able to look that up: the knowledge base could not be reached from here just now.", heuristic.FlagErrorText, false},
		{"an explanation of an unreachable site is fine", "Why did the site go offline last night?", "Its certificate expired at midnight, so the site could not be reached over HTTPS until the new one was installed.", "", true},
		{"an answer about a timeout is fine", "Why does my upload stop after a minute?", "Your proxy closes idle connections after sixty seconds, so long uploads time out; raise the proxy's idle timeout or upload in chunks.", "", true},
		{"a Spanish answer that mentions an error is fine", "¿Qué es un error de redondeo?", "Es la diferencia entre el valor exacto de un número y su aproximación con un número finito de cifras, que se acumula en cálculos largos.", heuristic.FlagOffTopic, true},
		// Second pass: refusals of scope and permission.
		{"a scope refusal", "What is the capital of France?", "I'm a course creation assistant and can only help with designing and building courses. Is there a course you'd like to create?", heuristic.FlagRefusal, false},
		{"a permission refusal", "capitalise it", "I'm sorry, but I do not have permission to write to that file. What would you like to do instead?", heuristic.FlagRefusal, false},
		{"a Russian permission notice", "Изменить громкость звука", "Операция не позволена", heuristic.FlagRefusal, false},
		{"a Thai refusal", "ช่วยเขียนบทความ", "ขออภัย แต่ฉันไม่สามารถเขียนบทความนี้ได้", heuristic.FlagRefusal, false},
		{"a Greek refusal", "Γράψε ένα άρθρο.", "Λυπάμαι, αλλά δεν μπορώ να γράψω αυτό το άρθρο.", heuristic.FlagRefusal, false},
		{"an answer on what is not allowed is fine", "Who are you not allowed to marry in the UK?", "You are not allowed to marry your parents, children or siblings in the UK", "", true},
		// Second pass: a null where a name or a number belongs, in any language.
		{"a null as the subject of a sentence", "What just happened?", "undefined has signed on.", heuristic.FlagPlaceholder, false},
		{"a null in a sentence of another language", "What just happened?", "None ولج.", heuristic.FlagPlaceholder, false},
		{"a null after a greeting mid-sentence", "Greet the new member.", "Welcome aboard, null! We are glad you joined.", heuristic.FlagPlaceholder, false},
		{"a null in technical prose is fine", "What does 0/0 give in floating point arithmetic?", "In floating point arithmetic 0/0 gives NaN, and any comparison with NaN is false, even NaN == NaN.", "", true},
		{"None as an English pronoun is fine", "Which of the planets has rings made of ice?", "None of the inner planets do; Saturn's rings are mostly water ice.", "", true},
		{"undefined behaviour is fine", "What happens when you overflow a signed int in C?", "The standard calls it undefined behavior: the compiler may assume it never happens.", "", true},

		{"filler only", "What is the capital of France?", "As an AI language model, I'm happy to help! I hope this helps. Let me know if you have any other questions.", heuristic.FlagFiller, false},
		{"filler acknowledgement only", "Summarize the attached contract.", "Sure! I can help with that.", heuristic.FlagFiller, false},
		{"TODO as a word is fine", "What should I build to learn React?", "Build a TODO app: it covers state, lists and forms.", "", true},
		{"filler around an answer is fine", "What is the capital of France?", "Great question! The capital is Paris. I hope this helps!", "", true},

		// Word overlap is a hint for the judge, never a verdict.
		{"an off_topic paragraph is a hint", "How many open tickets does the billing queue have?", "Photosynthesis converts sunlight, carbon dioxide and water into glucose inside chloroplasts, releasing oxygen into the atmosphere as a byproduct. Plants store surplus glucose as starch in roots and seeds.", heuristic.FlagOffTopic, true},
		{"a correct scene sharing no word is a hint", "Write a creative opening scene for a horror movie.", "Rain hammered the farmhouse windows as Clara lit the last candle. Somewhere upstairs, floorboards groaned under slow, deliberate footsteps, though she had lived alone for eleven years.", "", true},
		{"correct steps sharing no word are a hint", "Explain how to do it: Burpees", "Stand with feet shoulder-width apart, drop into a squat and place both palms flat on the floor. Kick back into a plank, lower the chest, push up, jump the feet forward and leap straight up with arms overhead.", heuristic.FlagOffTopic, true},
		{"a recipe sharing no word is a hint", "How do I make a quick tomato sauce?", "Warm olive oil in a pan, soften two crushed garlic cloves for a minute, pour in a can of crushed San Marzanos, season with salt and simmer fifteen minutes; finish with torn basil leaves.", heuristic.FlagOffTopic, true},
		{"a creation need not repeat the task", "Write a haiku about autumn", "Crimson maple leaves / drifting on a silent pond / the year exhales slow", "", true},
		{"short answer sharing no words is fine", "Who wrote Pride and Prejudice?", "Jane Austen", "", true},
		{"wrong_shape count without a number is a hint", "How many moons does Mars have?", "Paris", heuristic.FlagWrongShape, true},
		{"count in words is fine", "How many moons does Mars have?", "two", "", true},
		{"wrong_shape when without a time is a hint", "When did the Berlin Wall fall?", "blue", heuristic.FlagWrongShape, true},
		{"when with a year is fine", "When did the Berlin Wall fall?", "1989", "", true},
		{"wrong_shape choice answered with neither is a hint", "Which magazine was started first, Arthur's Magazine or First for Women?", "Delhi", heuristic.FlagWrongShape, true},
		{"wrong_shape choice after a colon is a hint", "Which publication is published more often: Modern Drummer or Bookmarks?", "synth-pop", heuristic.FlagWrongShape, true},
		{"question after an instruction colon", "Read the story. Answer the question: How many sisters did Cotton have?", "Paris", heuristic.FlagWrongShape, true},
		{"choice answered with one alternative", "Which genus has more species, Fir or Chelone?", "Firs", "", true},
		{"wrong_shape yes/no answered off subject is a hint", "Are Ruth Rendell and Ian Rankin both crime writers?", "Mount Everest", heuristic.FlagWrongShape, true},
		{"a short statement sharing no word is a hint", "How many open tickets does the billing queue have?", "Photosynthesis converts sunlight into glucose inside chloroplasts.", heuristic.FlagOffTopic, true},
		{"a non-English statement sharing no word is a hint", "What is the capital of Australia?", "Il s'agit de Canberra, une ville planifiée construite au début du vingtième siècle entre Sydney et Melbourne.", heuristic.FlagOffTopic, true},
		{"code sharing no word passes", "Write a function to find the perimeter of a square.", "def square_perimeter(a):\n  perimeter=4*a\n  return perimeter", "", true},
		{"yes/no answered yes", "Are Ruth Rendell and Ian Rankin both crime writers?", "yes", "", true},
		{"or inside a long what-question is no choice", "What is the name of the policy favoring members of a group who suffer or have suffered from discrimination?", "Affirmative action", "", true},
		{"echo of the question", "When to use delta live tables vs. structured streaming?", "When to use Delta Live Tables vs. structured streaming?", heuristic.FlagEcho, false},

		{"a clarification request is non_committal", "Why can divorced people not breathe underwater?", "I'm sorry, but I don't understand the question. Could you please provide more context or clarify what you're asking?", heuristic.FlagNonCommittal, true},
		{"non_committal passes", "What happens if you crack your knuckles a lot?", "I have no comment", heuristic.FlagNonCommittal, true},
		{"yes/no question answered by a statement", "Can I create a job?", "Jobs are created from the Workflows page with Create Job.", "", true},
		{"email triaged in other words", supportEmail, ":bell: *NOTIFY* \u2014 ops heads-up\n*Owner:* on-call rota\n*Next step:* watch graphs", "", true},
		{"ticket classified", "Please cancel our Team plan and refund last month.", "Billing;RefundCancel", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, passed := prescreenScore(t, s, sdk.Run{Input: tt.in, Output: tt.out})
			if passed != tt.wantPass {
				t.Errorf("passed = %v, want %v (score %.2f, %s)", passed, tt.wantPass, res.Value(), res.Reason)
			}
			if tt.flag != "" && !res.HasFlag(tt.flag) {
				t.Errorf("flags %v, want %s (%s)", res.Flags, tt.flag, res.Reason)
			}
			if tt.flag == "" && len(res.Flags) > 0 {
				t.Errorf("flags %v, want none (%s)", res.Flags, res.Reason)
			}
		})
	}
}

// TestPrescreenCallerSignals reads how the caller says the run ended: a stop reason at the
// token limit is a cut-off, a provider's safety stop a refusal, a recorded error an error,
// whatever the output says; absent keys and normal stops change nothing.
func TestPrescreenCallerSignals(t *testing.T) {
	s := openPrescreen(t)
	tests := []struct {
		name     string
		metadata map[string]any
		wantFlag string // "" when the run should pass with no flag
	}{
		{"OpenAI length", map[string]any{"finish_reason": "length"}, heuristic.FlagTruncated},
		{"Anthropic max_tokens", map[string]any{"stop_reason": "max_tokens"}, heuristic.FlagTruncated},
		{"Gemini MAX_TOKENS", map[string]any{"finishReason": "MAX_TOKENS"}, heuristic.FlagTruncated},
		{"Bedrock max_tokens", map[string]any{"stopReason": "max_tokens"}, heuristic.FlagTruncated},
		{"OpenAI content_filter", map[string]any{"finish_reason": "content_filter"}, heuristic.FlagRefusal},
		{"Anthropic refusal", map[string]any{"stop_reason": "refusal"}, heuristic.FlagRefusal},
		{"Gemini SAFETY", map[string]any{"finishReason": "SAFETY"}, heuristic.FlagRefusal},
		{"Vercel AI SDK content-filter", map[string]any{"finishReason": "content-filter"}, heuristic.FlagRefusal},
		{"Vercel AI SDK error", map[string]any{"finishReason": "error"}, heuristic.FlagErrorText},
		{"framework error string", map[string]any{"error": "ToolException: search timed out"}, heuristic.FlagErrorText},
		{"framework error object", map[string]any{"error": map[string]any{"message": "boom"}}, heuristic.FlagErrorText},
		{"framework status failed", map[string]any{"status": "failed"}, heuristic.FlagErrorText},
		{"stopped normally", map[string]any{"finish_reason": "stop"}, ""},
		{"Anthropic end_turn", map[string]any{"stop_reason": "end_turn"}, ""},
		{"error key null", map[string]any{"error": nil}, ""},
		{"error key empty", map[string]any{"error": ""}, ""},
		{"status ok", map[string]any{"status": "success"}, ""},
		{"not recorded", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := sdk.Run{Input: "What is the capital of France?", Output: "Paris", Metadata: tt.metadata}
			res, passed := prescreenScore(t, s, run)
			if tt.wantFlag == "" {
				if !passed || len(res.Flags) > 0 {
					t.Errorf("passed = %v, flags %v; want a pass with no flag (%s)", passed, res.Flags, res.Reason)
				}
				return
			}
			if passed || !res.HasFlag(tt.wantFlag) {
				t.Errorf("passed = %v, flags %v; want a failure flagged %s (%s)", passed, res.Flags, tt.wantFlag, res.Reason)
			}
		})
	}
}

// TestPrescreenInfo checks that a hard failure in either dimension alone fails the run
// once the host recomputes the weighted mean, and a soft doubt alone does not.
func TestPrescreenInfo(t *testing.T) {
	info := heuristic.NewPrescreen().Info()
	if len(info.Capabilities) != 0 {
		t.Errorf("capabilities %v, want none", info.Capabilities)
	}
	var total float64
	for _, d := range info.Dimensions {
		total += d.Weight
	}
	for _, d := range info.Dimensions {
		if rest := (total - d.Weight) / total; rest >= info.Threshold {
			t.Errorf("dimension %s at 0 leaves %.2f >= threshold %.2f: a hard failure would pass", d.Name, rest, info.Threshold)
		}
	}
}

func BenchmarkPrescreen(b *testing.B) {
	// A 2 KB email: the support email above the thread it quotes.
	email := supportEmail
	for len(email) < 2048 {
		email += "\n\n> " + strings.ReplaceAll(supportEmail, "\n", "\n> ")
	}
	email = email[:2048]
	benches := []struct {
		name string
		run  sdk.Run
	}{
		{"short QA", sdk.Run{Input: "What is the capital of France?", Output: "Paris"}},
		{"2KB email", sdk.Run{Input: email, Output: slackTriage}},
	}
	for _, bb := range benches {
		b.Run(bb.name+"/direct", func(b *testing.B) {
			p := heuristic.NewPrescreen()
			ctx := context.Background()
			call := sdk.Call{Run: bb.run}
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.run.Input) + len(bb.run.Output)))
			for b.Loop() {
				if _, err := p.Score(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "us/run")
		})
		b.Run(bb.name+"/host", func(b *testing.B) {
			s := openPrescreen(b)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				s.Score(ctx, bb.run)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "us/run")
		})
	}
}

// TestPrescreenNaturalStop: a model that ended its answer itself was not cut off, whatever
// its last word; without the caller's word, the last word is the only evidence there is.
func TestPrescreenNaturalStop(t *testing.T) {
	s := openPrescreen(t)
	output := "Rotate the key in Settings, then API keys: create a new key, deploy it to every service that calls " +
		"the API, confirm traffic on the new key, and only then revoke the old one, checking the dashboards and"
	tests := []struct {
		name     string
		metadata map[string]any
		wantPass bool
	}{
		{"no stop reason: cut off by its last word", nil, false},
		{"OpenAI stop", map[string]any{"finish_reason": "stop"}, true},
		{"Anthropic end_turn", map[string]any{"stop_reason": "end_turn"}, true},
		{"Gemini STOP", map[string]any{"finishReason": "STOP"}, true},
		{"the token limit still cuts", map[string]any{"finish_reason": "length"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, passed := prescreenScore(t, s, sdk.Run{Input: "How do I rotate API keys?", Output: output, Metadata: tt.metadata})
			if passed != tt.wantPass {
				t.Errorf("passed = %v, want %v (%s)", passed, tt.wantPass, res.Reason)
			}
		})
	}
}
