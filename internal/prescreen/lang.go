package prescreen

// The pre-screen's multilingual word lists: refusals and failure notices in English and the
// languages most used on the web (Spanish, German, French, Portuguese, Italian, Dutch,
// Polish, Russian, Turkish, Japanese, Chinese, Korean, Arabic, Vietnamese, Indonesian,
// Persian, Hindi), then apologies and inabilities in thirty more (Greek, Slavic, Nordic,
// Indic, Turkic, Thai, Hebrew, Swahili, ...), and short product notices of failure or
// refused permission in about thirty. Phrases are lower case, as screenText folds the
// output; typographic apostrophes are folded to "'".

// refusalPhrases decline a request on their own. The English generic inabilities at the
// end ("i can't ") count only where declinesRequest says they decline the request.
var refusalPhrases = newPhraseSet(
	// English: apologies that introduce a refusal, inability and unwillingness to do what was
	// asked, and appeals to guidelines.
	"i'm sorry, but", "i am sorry, but", "i'm sorry, i can", "i am sorry, i can", "sorry, but i can", "i apologize, but",
	"i'm really sorry, but", "my apologies, but", "i'm afraid i can", "i am afraid i can", "i'm afraid that's not", "i'm afraid i won't",
	"i'm not able to", "i am not able to", "i'm unable to", "i am unable to", "i must decline", "i have to decline", "i need to decline",
	"i must refuse", "i have to refuse", "i must respectfully decline", "i'll have to decline", "i will have to decline", "i'll have to pass",
	"i'd rather not", "i would rather not", "i'd prefer not to", "i would prefer not to", "i prefer not to",
	"not something i can help", "not something i'm able to", "not something i am able to", "not something i can assist",
	"not something i can do", "not something i'll", "not something i will", "isn't something i can", "is not something i can",
	"i'm not comfortable", "i am not comfortable", "i don't feel comfortable", "i do not feel comfortable",
	"i'm not in a position to", "i am not in a position to", "i won't be able to", "i will not be able to", "i'm not going to", "i am not going to",
	"it is not appropriate", "it's not appropriate", "it is inappropriate", "it's inappropriate", "i don't think it's appropriate",
	"i do not think it is appropriate", "it is not ethical", "it's not ethical", "it would not be ethical", "it would be unethical",
	"not able to provide", "cannot fulfill", "can't fulfill", "cannot assist", "can't assist", "cannot help with", "can't help with",
	"cannot provide", "can't provide", "cannot comply", "can't comply", "unable to comply", "unable to assist", "unable to help with",
	"against my programming", "ethical guidelines", "against my guidelines", "goes against my", "violates my", "my guidelines don't",
	"as a responsible ai", "i'm just an ai", "i am just an ai", "i must respectfully", "i'm not programmed", "i am not programmed",
	"do not condone", "don't condone", "i strongly advise against", "this request goes against",
	"i cannot provide information or", "i'm not able to provide information",
	// Scope and permission rather than ability: "that's beyond my current scope", "I'm only
	// able to help with meals, guest Wi-Fi and leave", "I do not have permission to write to
	// that file", a provider's block.
	"beyond my current scope", "beyond my scope", "outside my scope", "outside of my scope", "outside the scope of what i",
	"not within my scope", "outside my area of expertise", "outside of my area of expertise", "that's outside my area",
	"outside what i'm allowed", "outside of what i'm allowed", "outside what i am allowed", "i can only help with",
	"i can only assist with", "i can only answer questions", "assistant and can only", "i'm only able to help",
	"i am only able to help", "i'm only able to assist", "i am only able to assist", "i'm only here to help with",
	"i can't give a response to that", "i cannot give a response to that", "let's talk about something else",
	"let's try a different topic", "i do not have permission to", "i don't have permission to", "i'm not permitted to",
	"i am not permitted to", "i'm not allowed to", "i am not allowed to", "i'm not authorized to", "i am not authorized to",
	"this request was blocked", "your request was blocked",
	// Spanish
	"no puedo ayudar", "no puedo cumplir", "no puedo proporcionar", "no puedo responder", "no puedo asistir", "no puedo hacer eso",
	"no puedo brindar", "no puedo ofrecer", "no puedo realizar", "no me es posible", "no estoy en condiciones de", "me temo que no puedo",
	"lo siento, pero no", "lamentablemente, no puedo", "lamentablemente no puedo", "no puedo satisfacer", "debo rechazar",
	// Portuguese
	"não posso ajudar", "não consigo ajudar", "não posso fornecer", "não consigo atender", "não posso atender", "não posso cumprir",
	"não posso responder", "não posso fazer isso", "desculpe, mas não", "infelizmente, não posso", "infelizmente, não consigo",
	"infelizmente não posso", "não sou capaz de", "não me é possível",
	// German
	"kann ich nicht helfen", "kann ich leider nicht", "kann ich nicht erfüllen", "kann ich dir nicht helfen", "kann ich ihnen nicht helfen",
	"ich kann nicht helfen", "darf ich dazu keine", "darf ich keine", "kann ich keine auskunft", "es tut mir leid, aber ich kann",
	"es tut mir leid, aber dabei", "leider kann ich", "ich bin nicht in der lage", "das kann ich nicht tun", "muss ich ablehnen",
	"dabei kann ich nicht", "kann ich nicht nachkommen",
	// French
	"je ne peux pas vous aider", "je ne peux pas t'aider", "je ne peux pas répondre", "je ne peux pas fournir", "je ne peux pas faire",
	"je ne suis pas en mesure de", "je ne peux pas satisfaire", "je ne peux pas donner", "je ne peux pas accéder", "je ne peux pas accomplir",
	"désolé, mais je ne peux", "désolée, mais je ne peux", "malheureusement, je ne peux", "je dois refuser", "je ne peux pas répondre à",
	// Italian
	"non posso aiutarti", "non posso aiutare", "non posso fornire", "non posso soddisfare", "non sono in grado di", "non posso rispondere",
	"mi dispiace, ma non posso", "purtroppo non posso", "non posso farlo", "devo rifiutare",
	// Dutch
	"kan ik je niet mee helpen", "kan ik u niet mee helpen", "kan ik niet helpen", "helaas kan ik", "ik kan niet helpen",
	"ik kan niet voldoen", "niet aan dit verzoek voldoen", "het spijt me, maar ik kan", "het spijt me, maar daar", "ik ben niet in staat",
	// Polish
	"nie mogę w tym pomóc", "nie mogę pomóc", "nie mogę spełnić", "nie mogę udzielić", "niestety nie mogę", "przepraszam, ale nie mogę",
	"nie jestem w stanie",
	// Russian
	"не могу помочь", "не могу выполнить", "не могу предоставить", "не могу ответить", "не могу с этим помочь", "к сожалению, я не могу",
	"извините, но я не могу", "я не могу этого сделать", "не могу выполнить этот запрос", "вынужден отказать",
	// Turkish
	"yardımcı olamam", "yerine getiremem", "karşılayamam", "yanıt veremem", "cevap veremem", "sağlayamam", "bunu yapamam",
	// Japanese
	"お応えできません", "お答えできません", "お手伝いできません", "提供することはできません", "対応できません", "できかねます",
	"お受けできません", "お答えすることはできません", "お手伝いすることはできません",
	// Chinese
	"我无法帮助", "无法帮助您", "无法帮助你", "我无法提供", "我不能提供", "无法回答这个问题", "不能回答这个问题", "我无法满足",
	"我不能帮助", "无法协助", "不便回答", "我无法完成", "我不能完成",
	// Korean
	"도와드릴 수 없습니다", "도와드릴 수 없어요", "응답할 수 없습니다", "답변할 수 없습니다", "답변드릴 수 없습니다", "제공할 수 없습니다",
	"도움을 드릴 수 없습니다",
	// Arabic
	"لا أستطيع المساعدة", "لا يمكنني المساعدة", "لا يمكنني تلبية", "لا أستطيع تلبية", "لا يمكنني تقديم", "لا أستطيع تقديم",
	"لا يمكنني الإجابة", "لا أستطيع الإجابة",
	// Vietnamese
	"tôi không thể giúp", "không thể giúp bạn", "xin lỗi, tôi không thể", "tôi không thể cung cấp", "tôi không thể trả lời",
	// Indonesian
	"tidak dapat membantu", "tidak bisa membantu", "maaf, saya tidak dapat", "maaf, saya tidak bisa", "saya tidak dapat memberikan",
	"saya tidak dapat memenuhi",
	// Persian
	"نمی‌توانم کمک کنم", "نمی‌توانم در این مورد", "نمی توانم کمک کنم", "متأسفم، نمی‌توانم", "متاسفم، نمی‌توانم",
	// Hindi
	"मदद नहीं कर सकता", "मदद नहीं कर सकती", "सहायता नहीं कर सकता", "सहायता नहीं कर सकती",
	// A judgement of the request, as English "it is not appropriate" and "it would be
	// unethical" decline: the same words in the other languages above.
	"no es apropiado", "no sería apropiado", "no es ético", "no sería ético", "não é apropriado", "não seria apropriado",
	"não é ético", "ist nicht angemessen", "wäre nicht angemessen", "ist nicht ethisch", "wäre unethisch", "n'est pas approprié",
	"ne serait pas approprié", "n'est pas éthique", "ne serait pas éthique", "non è appropriato", "non sarebbe appropriato",
	"non è etico", "non sarebbe etico", "is niet gepast", "zou niet gepast", "is niet ethisch", "nie jest właściwe",
	"nie byłoby właściwe", "nie jest etyczne", "это неуместно", "было бы неуместно", "это неэтично", "было бы неэтично",
	"uygun değildir", "etik değildir", "適切ではありません", "倫理的ではありません", "这是不合适的", "这是不道德的", "不符合道德",
	"적절하지 않습니다", "윤리적이지 않습니다",
	// English generic inabilities, last: see genericInabilities.
	"i cannot ", "i can't ", "i can not ", "i won't ", "i will not ",
)

// genericInabilities are the phrases of refusalPhrases that also occur in answers ("I can't
// attend on Thursday" in a drafted note); declinesRequest decides.
var genericInabilities = map[string]struct{}{"i cannot ": {}, "i can't ": {}, "i can not ": {}, "i won't ": {}, "i will not ": {}}

// helpingVerbs follow a generic inability that declines the request.
var helpingVerbs = map[string]struct{}{
	"help": {}, "assist": {}, "provide": {}, "do": {}, "fulfill": {}, "fulfil": {}, "comply": {}, "answer": {}, "create": {},
	"write": {}, "generate": {}, "share": {}, "give": {}, "discuss": {}, "engage": {}, "support": {}, "offer": {}, "tell": {},
	"recommend": {}, "complete": {}, "process": {}, "continue": {}, "produce": {}, "make": {}, "participate": {}, "condone": {},
	"encourage": {}, "promote": {}, "facilitate": {}, "respond": {}, "reply": {}, "that": {}, "this": {}, "it": {}, "with": {},
	"accommodate": {}, "satisfy": {}, "perform": {}, "carry": {}, "grant": {}, "disclose": {}, "reveal": {}, "endorse": {},
	"draft": {}, "summarize": {}, "translate": {}, "describe": {}, "explain": {}, "list": {}, "suggest": {}, "advise": {},
	"be": {}, "go": {}, "agree": {}, "allow": {}, "in": {},
}

// refusalApologies are apologies, regrets and an assistant's self-reference that open a
// refusal; they count together with one of refusalInabilities.
var refusalApologies = newPhraseSet(
	"sorry", "apologi", "unfortunately", "i'm afraid", "as an ai", "as a language model", "as an assistant",
	"lo siento", "lamentablemente", "disculpa", "me temo", "como modelo de lenguaje", "como ia,", "como una ia",
	"desculpe", "infelizmente", "lamento", "como modelo de linguagem",
	"es tut mir leid", "leider", "entschuldig", "als ki-", "als ki ", "als sprachmodell",
	"désolé", "désolée", "malheureusement", "je suis navré", "en tant qu'ia", "en tant que modèle",
	"mi dispiace", "purtroppo", "spiacente", "in qualità di modello", "come modello linguistico", "come ia,",
	"het spijt me", "helaas", "sorry,", "als taalmodel",
	"przepraszam", "niestety", "jako model językowy",
	"извините", "к сожалению", "простите", "как языковая модель", "как ии",
	"üzgünüm", "maalesef", "bir yapay zeka",
	"申し訳", "すみません", "残念ながら", "aiアシスタントとして", "aiとして", "言語モデルとして",
	"抱歉", "对不起", "很遗憾", "作为一个人工智能", "作为人工智能", "作为一个ai", "作为ai", "作为一个语言模型",
	"죄송", "유감스럽게도", "ai로서", "인공지능으로서",
	"عذرا", "عذراً", "آسف", "للأسف", "كنموذج لغوي",
	"xin lỗi", "rất tiếc", "là một mô hình ngôn ngữ",
	"maaf", "sayangnya", "sebagai model bahasa", "sebagai ai",
	"متأسفم", "متاسفم", "ببخشید", "به عنوان یک مدل زبانی",
	"माफ़ कीजिए", "माफ़ करें", "क्षमा करें", "खेद है", "एक एआई के रूप में",
	// Greek, Ukrainian, Czech, Slovak, Romanian, Hungarian, Swedish, Danish and Norwegian,
	// Finnish, Hebrew, Thai, Bengali, Tamil, Telugu, Marathi, Urdu, Swahili, Malay, Tagalog,
	// Bulgarian, Serbian and Croatian.
	"λυπάμαι", "συγγνώμη", "δυστυχώς", "ως μοντέλο", "вибачте", "на жаль", "перепрошую", "omlouvám se", "bohužel",
	"je mi líto", "prepáčte", "ľutujem", "žiaľ", "îmi pare rău", "din păcate", "scuze", "sajnálom", "sajnos", "elnézést",
	"tyvärr", "jag är ledsen", "beklager", "desværre", "dessverre", "valitettavasti", "pahoittelen", "olen pahoillani",
	"מצטער", "מצטערת", "לצערי", "ขออภัย", "ขอโทษ", "เสียใจ", "দুঃখিত", "মাফ করবেন", "மன்னிக்கவும்", "வருந்துகிறேன்",
	"క్షమించండి", "క్షమించాలి", "माफ करा", "क्षमस्व", "معذرت", "معاف کیجیے", "افسوس", "samahani", "kwa bahati mbaya",
	"minta maaf", "paumanhin", "ikinalulungkot", "съжалявам", "за съжаление", "извините", "нажалост", "žao mi je", "nažalost",
	// Gujarati, Kannada, Malayalam, Punjabi, Nepali, Azerbaijani, Kazakh, Uzbek, Catalan,
	// Galician, Amharic.
	"માફ કરશો", "દિલગીર", "ಕ್ಷಮಿಸಿ", "ಕ್ಷಮಿಸಬೇಕು", "ക്ഷമിക്കണം", "ക്ഷമിക്കുക", "ਮਾਫ਼ ਕਰਨਾ", "ਮਾਫ ਕਰਨਾ", "ਅਫ਼ਸੋਸ", "माफ गर्नुहोस्",
	"क्षमा गर्नुहोस्", "bağışlayın", "üzr istəyirəm", "təəssüf ki", "кешіріңіз", "өкінішке орай", "kechirasiz", "afsuski",
	"ho sento", "em sap greu", "malauradament", "síntoo", "desculpe, pero", "desafortunadamente", "ይቅርታ",
)

// refusalOpeners open a refusal the way an apology does when they open the output: "I
// understand that ..., but I can't", in every language. They count together with one of
// refusalInabilities.
var refusalOpeners = newPhraseSet("i understand that", "i understand your", "i understand you", "je comprends que", "je comprends votre",
	"entiendo que", "entiendo tu", "entiendo su", "entendo que", "compreendo que", "ich verstehe, dass", "ich verstehe ihr", "ich verstehe dein",
	"capisco che", "comprendo che", "ik begrijp dat", "ik begrijp je", "ik begrijp uw", "rozumiem, że", "rozumiem twoj",
	"я понимаю", "anlıyorum", "我理解", "我明白", "理解しました", "理解できますが", "이해합니다")

// refusalInabilities state that the speaker cannot or will not; with an apology they refuse.
var refusalInabilities = newPhraseSet(
	"i cannot", "i can't", "i can not", "i won't", "i will not", "i'm unable", "i am unable", "i'm not able", "i am not able",
	"no puedo", "no me es posible", "não posso", "não consigo", "não é possível",
	"kann ich nicht", "ich kann nicht", "kann ich keine", "darf ich nicht", "darf ich keine", "kann ich das nicht",
	"je ne peux pas", "je ne suis pas en mesure", "je ne pourrai pas",
	"non posso", "non sono in grado", "non riesco",
	"kan ik niet", "ik kan niet", "kan ik je niet", "kan ik u niet", "ik kan geen", "ik kan je niet", "ik kan u niet",
	"nie mogę", "nie jestem w stanie",
	"не могу", "не смогу", "не в состоянии",
	"yapamam", "olamam", "veremem", "edemem", "getiremem", "sağlayamam",
	"できません", "できかねます", "いたしかねます",
	"无法", "不能", "没办法", "做不到",
	"수 없습니다", "수 없어요", "수 없어",
	// After an apology, a judgement of the request declines it as an inability does: "죄송합니다만,
	// 그런 캠페인을 만드는 것은 적절하지 않습니다" ("Sorry, but making such a campaign is not
	// appropriate").
	"적절하지 않", "부적절", "不適切", "不合适", "不适当", "不恰当",
	"لا أستطيع", "لا يمكنني", "لا يمكن",
	"không thể",
	"tidak dapat", "tidak bisa",
	"نمی‌توانم", "نمی توانم", "قادر نیستم",
	"नहीं कर सकता", "नहीं कर सकती", "असमर्थ",
	"δεν μπορώ", "δεν είμαι σε θέση", "не можу", "не в змозі", "nemohu", "nemůžu", "nemôžem", "nu pot", "nu sunt în măsură",
	"nem tudok", "nem tudom", "nem áll módomban", "kan jag inte", "jag kan inte", "kan jeg ikke", "jeg kan ikke", "en voi",
	"en pysty", "לא יכול", "לא יכולה", "ไม่สามารถ", "পারব না", "পারি না", "পারছি না", "সম্ভব নয়", "முடியாது", "இயலாது",
	"చేయలేను", "చేయలేము", "సాధ్యం కాదు", "शकत नाही", "नाही करू शकत", "نہیں کر سکتا", "نہیں کر سکتی", "siwezi", "haiwezekani",
	"tidak boleh", "hindi ko magagawa", "hindi ko kaya", "не мога", "не могу да", "ne mogu", "ne mogu da",
	"કરી શકતો નથી", "કરી શકતી નથી", "શક્ય નથી", "ಸಾಧ್ಯವಿಲ್ಲ", "ಮಾಡಲಾರೆ", "കഴിയില്ല", "സാധ്യമല്ല", "ਨਹੀਂ ਕਰ ਸਕਦਾ", "ਨਹੀਂ ਕਰ ਸਕਦੀ",
	"सक्दिन", "सम्भव छैन", "bilmərəm", "edə bilmərəm", "алмаймын", "мүмкін емес", "olmayman", "qila olmayman", "no puc",
	"non podo", "አልችልም",
)

// openingInabilities are first-person statements of inability that decline the request
// when they open the output (openingInability). English is handled by refusalPhrases'
// generic inabilities and declinesRequest.
var openingInabilities = newPhraseSet(
	"no puedo ", "no me es posible", "não posso ", "não consigo ", "não sou capaz",
	"ich kann nicht", "ich kann kein", "ich kann dir nicht", "ich kann ihnen nicht", "ich kann das nicht", "ich darf kein", "ich darf nicht",
	"je ne peux pas", "je ne peux ", "je ne suis pas en mesure",
	"non posso ", "non sono in grado",
	"ik kan niet", "ik kan geen", "ik kan je niet", "ik kan u niet", "ik ben niet in staat",
	"nie mogę ", "nie jestem w stanie",
	"я не могу", "не могу ", "я не в состоянии",
	"我不能", "我无法", "我没办法", "我不可以",
	"لا أستطيع", "لا يمكنني",
	"tôi không thể", "saya tidak dapat", "saya tidak bisa",
	"ben bunu yapamam",
	"δεν μπορώ ", "я не можу", "не можу ", "nemohu ", "nemůžu ", "nemôžem ", "nu pot ", "nem tudok ", "jag kan inte ", "jeg kan ikke ",
	"en voi ", "אני לא יכול", "ฉันไม่สามารถ", "ผมไม่สามารถ", "ดิฉันไม่สามารถ", "siwezi ", "saya tidak boleh", "hindi ko ",
	"не мога ", "ne mogu ",
)

// firstPersonOpenings open a Japanese or Korean sentence in the first person, or with an
// apology, whose verb comes last.
var firstPersonOpenings = newPhraseSet("私は", "私には", "わたしは", "申し訳", "저는", "제가", "죄송", "আমি ", "நான் ", "నేను ",
	"मी ", "میں ", "मैं ")

// sentenceFinalInabilities end a Japanese or Korean sentence that declines.
var sentenceFinalInabilities = newPhraseSet("できません", "いたしかねます", "できかねます", "수 없습니다", "수 없어요", "않겠습니다",
	"পারব না", "পারি না", "முடியாது", "இயலாது", "చేయలేను", "शकत नाही", "نہیں کر سکتا", "نہیں کر سکتی", "नहीं कर सकता", "नहीं कर सकती")

// failureNotices are sentences that only report a failure, as chat front ends and agent
// frameworks show them in place of an answer; they count in short outputs.
var failureNotices = newPhraseSet(
	"something went wrong", "an error occurred", "an error has occurred", "an unexpected error", "error occurred while",
	"we encountered an error", "i encountered an error", "there was an error", "there was a problem processing",
	"unable to process your request", "could not process your request", "couldn't process your request",
	"failed to generate a response", "failed to get a response", "no response was generated", "i'm having trouble connecting",
	"i am having trouble connecting", "service is temporarily unavailable", "the request timed out",
	"algo salió mal", "se produjo un error", "ocurrió un error", "ha ocurrido un error",
	"etwas ist schiefgelaufen", "ein fehler ist aufgetreten", "es ist ein fehler aufgetreten",
	"une erreur est survenue", "une erreur s'est produite", "quelque chose s'est mal passé",
	"algo deu errado", "ocorreu um erro", "si è verificato un errore", "qualcosa è andato storto",
	"er is iets misgegaan", "er is een fout opgetreden", "coś poszło nie tak", "wystąpił błąd",
	"что-то пошло не так", "произошла ошибка", "bir hata oluştu", "bir şeyler ters gitti",
	"エラーが発生しました", "問題が発生しました", "出错了", "发生错误", "出现错误", "服务暂时不可用", "请求失败",
	"오류가 발생했습니다", "문제가 발생했습니다", "حدث خطأ", "đã xảy ra lỗi", "terjadi kesalahan",
)

// Short product notices in the languages programs are translated into most: a failure
// (noticeFailures) with a request to retry (noticeRetries), or alone in a few words, and a
// refusal for want of permission (noticePermissions). They count only in a short output of
// its own (findNotice): in an answer they are its subject. English generic phrases ("not
// allowed", "you are not allowed to") are not here: "You are not allowed to marry your
// siblings" answers a question.
var noticeFailures = newPhraseSet(
	"fehler", "fehlgeschlagen", "nicht verfügbar", "nicht erreichbar", "zeitüberschreitung", "keine verbindung", "verbindung konnte nicht",
	"erreur", "échec", "échoué", "indisponible", "non disponible", "délai d'attente", "délai de connexion", "impossible de se connecter", "connexion impossible",
	"se produjo un error", "falló", "no disponible", "no está disponible", "tiempo de espera", "no se pudo conectar",
	"um erro", "erro ao", "falhou", "falha", "indisponível", "não está disponível", "tempo esgotado", "não foi possível conectar",
	"errore", "non riuscit", "non disponibile", "tempo scaduto", "impossibile connettersi", "impossibile stabilire",
	"mislukt", "niet beschikbaar", "time-out", "kon geen verbinding",
	"błąd", "nie powiodło", "niedostępn", "przekroczono czas", "nie można połączyć",
	"ошибка", "не удалось", "недоступ", "истекло время", "тайм-аут",
	"помилка", "не вдалося", "недоступн", "час очікування",
	"hata", "başarısız", "kullanılamıyor", "zaman aşımı", "bağlanılamadı", "bağlanamadı",
	"エラー", "失敗しました", "利用できません", "タイムアウト", "接続できません", "接続できなかった",
	"错误", "失败", "不可用", "超时", "无法连接", "錯誤", "逾時", "無法連線", "無法使用",
	"오류", "실패", "사용할 수 없", "시간 초과", "연결할 수 없",
	"خطأ", "فشل", "غير متاح", "غير متوفر", "انتهت مهلة", "تعذر الاتصال", "تعذّر",
	"σφάλμα", "αποτυχία", "απέτυχε", "μη διαθέσιμ", "δεν είναι διαθέσιμ", "χρονικού ορίου", "αδυναμία σύνδεσης",
	"त्रुटि", "विफल", "उपलब्ध नहीं", "समय समाप्त", "कनेक्ट नहीं",
	"lỗi", "thất bại", "không khả dụng", "hết thời gian", "không thể kết nối",
	"kesalahan", "gagal", "tidak tersedia", "waktu habis", "tidak dapat terhubung",
	"ข้อผิดพลาด", "ล้มเหลว", "ไม่พร้อมใช้งาน", "หมดเวลา", "ไม่สามารถเชื่อมต่อ",
	"שגיאה", "נכשל", "אינו זמין", "לא זמין", "פג הזמן",
	"chyba", "selhal", "nedostupn", "vypršel", "hiba", "sikertelen", "nem érhető el", "időtúllépés",
	"misslyckades", "inte tillgänglig", "tidsgräns", "mislykkedes", "ikke tilgængelig", "mislyktes", "ikke tilgjengelig",
	"virhe", "epäonnistui", "ei ole käytettävissä", "aikakatkaisu", "eroare", "eșuat", "indisponibil", "nu este disponibil",
	"خطا", "ناموفق", "در دسترس نیست",
	// Something went wrong, in the words each language uses for it.
	"schief", "mal passé", "n'a pas marché", "salió mal", "correu mal", "deu errado", "andato storto", "ging iets mis",
	"poszło nie tak", "пошло не так", "пішло не так", "не спрацювало", "yanlış gitti", "ters gitti", "問題が発生", "出现了问题",
	"出了问题", "出错", "잘못되었", "πήγε στραβά", "πήγε λάθος", "गलत हो", "गलत हुआ", "tidak beres", "gick fel", "gik galt",
	"gikk galt", "meni vikaan", "השתבש", "něco se stalo", "proběhlo špatně", "xảy ra sự cố",
	// Not available, timed out, could not connect or install.
	"pas disponible", "non disponibili", "não disponível", "não estava disponível", "není dostupn", "není k dispozici",
	"ej tillgänglig", "tak tersedia", "אינה זמינה", "לא היתה זמינה", "không sử dụng được", "không có sẵn", "이용할 수 없",
	"无法使用", "kullanılabilir değil", "не был доступен", "لم يكن متاح", "δεν ήταν διαθέσιμ",
	"expiró", "expirou", "a expiré", "scaduta", "tempo esaurito", "verbinding verlopen", "przekroczyło czas", "превышено время",
	"quá hạn", "waktu operasi habis", "אזל הזמן", "הזמן שהוקצב", "제한 시간", "टाइम आउट", "časový limit", "tidsgräns",
	"nelze se připojit", "no se ha podido conectar", "não foi possível ligar", "gick inte att ansluta", "kunde inte ansluta",
	"לא ניתן להתחבר", "tidak bisa menyambung", "nie można się połączyć", "не получилось подключиться", "konnte nicht hergestellt",
	"no pudo instalarse", "nicht installiert werden", "non è riuscit", "không cài đặt được", "נכשלה", "selhalo", "misslyck",
)

// noticeRetries ask the user to try again or later.
var noticeRetries = newPhraseSet(
	"erneut", "später", "noch einmal", "réessay", "plus tard", "de nuevo", "vuelva a intentar", "más tarde", "novamente",
	"mais tarde", "riprova", "più tardi", "opnieuw", "later", "spróbuj ponownie", "później", "повторите", "попробуйте", "позже",
	"спробуйте", "пізніше", "tekrar dene", "daha sonra", "もう一度", "後で", "稍后", "重试", "再试", "稍後", "重試", "다시 시도",
	"나중에", "مرة أخرى", "لاحق", "ξαναδοκιμάστε", "δοκιμάστε ξανά", "αργότερα", "पुनः प्रयास", "फिर प्रयास", "बाद में",
	"thử lại", "coba lagi", "ลองใหม่", "อีกครั้ง", "נסה שוב", "מאוחר יותר", "znovu", "později", "újra", "később", "försök igen",
	"senare", "prøv igen", "prøv igjen", "senere", "yritä uudelleen", "myöhemmin", "din nou", "mai târziu", "دوباره", "بعدا",
)

// noticePermissions refuse for want of permission.
var noticePermissions = newPhraseSet(
	"permission denied", "access denied", "operation not permitted", "you do not have permission", "you don't have permission",
	"nicht erlaubt", "nicht gestattet", "keine berechtigung", "zugriff verweigert", "nicht zulässig",
	"non autorisé", "pas autorisé", "permission refusée", "accès refusé", "pas la permission", "n'êtes pas autorisé",
	"no permitido", "no está permitid", "permiso denegado", "acceso denegado", "no tiene permiso", "no tienes permiso",
	"não permitid", "permissão negada", "acesso negado", "não tem permissão",
	"non consentit", "non permess", "permesso negato", "accesso negato", "non hai il permesso", "non è consentit",
	"niet toegestaan", "toegang geweigerd", "geen toestemming", "geen rechten",
	"niedozwolon", "brak uprawnień", "odmowa dostępu", "nie masz uprawnień",
	"не разрешено", "не позволен", "запрещен", "запрещён", "отказано в доступе", "доступ запрещ", "нет прав", "недостаточно прав",
	"не дозволено", "заборонено", "відмовлено в доступі", "немає прав", "недостатньо прав",
	"izin verilmedi", "izniniz yok", "erişim reddedildi", "izin verilmiyor", "yetkiniz yok",
	"許可されていません", "権限がありません", "アクセスが拒否", "許可がありません",
	"不允许", "没有权限", "权限不足", "拒绝访问", "不被允許", "沒有權限", "權限不足", "不允許",
	"허용되지 않", "권한이 없", "액세스가 거부", "접근이 거부",
	"غير مسموح", "الإذن مرفوض", "رفض الإذن", "ليس لديك إذن", "ليست لديك صلاحية", "غير مصرح",
	"δεν επιτρέπεται", "άρνηση πρόσβασης", "δεν έχετε δικαίωμα", "δεν έχετε άδεια",
	"अनुमति नहीं", "अनुमति अस्वीकृत", "पहुँच अस्वीकृत",
	"không được phép", "không có quyền", "từ chối truy cập", "từ chối quyền",
	"tidak diizinkan", "izin ditolak", "akses ditolak", "tidak memiliki izin",
	"ไม่ได้รับอนุญาต", "ไม่อนุญาต", "ไม่มีสิทธิ์", "ปฏิเสธการเข้าถึง",
	"אין הרשאה", "אין לך הרשאה", "הגישה נדחתה", "לא מורשה", "אינו מורשה", "אינה מותרת",
	"není povolen", "přístup odepřen", "nemáte oprávnění", "nem engedélyezett", "hozzáférés megtagadva", "nincs jogosultság",
	"inte tillåten", "åtkomst nekad", "saknar behörighet", "ikke tilladt", "adgang nægtet", "ingen tilladelse", "ikke tillatt",
	"tilgang nektet", "ingen tillatelse", "ei sallittu", "pääsy estetty", "käyttöoikeus evätty", "nu este permis",
	"permisiune refuzată", "acces interzis", "nu aveți permisiunea", "مجاز نیست", "اجازه داده نشد", "دسترسی رد شد",
	"keine ausreichenden benutzerrechte", "nicht die erforderlichen rechte", "pas des permissions", "non permis", "non si hanno i permessi",
	"no permitid", "no tiene permisos", "não tem permissões", "brak uprawnienia", "нет доступа", "бракує прав", "не разрешен",
	"許可されていない", "허용하지 않", "권한 없음", "הרשאות", "אסורה", "hak untuk", "tak diizinkan", "tidak diijinkan",
	"không có đủ quyền", "quyền hạn", "rättigheter att", "tillåts ej", "ej tillåten", "niet de rechten", "zamítnut",
	"التصاريح", "لست مخول",
)
