"""Sentence-level extraction of memories by pattern (English and Chinese).

Each sentence of an eligible message is classified into at most one category; the
category maps to a record type of the profile's mode with a priority. Weaker than a
model, but deterministic, explainable and honest about provenance: every candidate
carries the message reference it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from apps.pipeline.rules.text import (
    DATE_NOTE_RE,
    HOST_PATTERN,
    TOOL_RE,
    ZH_STOP_CHARS,
    content_tokens,
    file_mentions,
    is_chinese,
    naming_words,
    resolve_relative_dates,
    speaker_of,
    values,
)
from apps.pipeline.rules.text import sentences as split_sentences

# Category patterns, checked in this order (first match wins).
STRONG_RE = re.compile(r"\b(never|always|must|must not|under no circumstances)\b|务必|必须|禁止|一律|永远不要|绝对不要|千万别", re.IGNORECASE)

# "don't forget to add the e2e tests" is a task, not a rule about how to work.
REMINDER_RE = re.compile(
    r"\b(don't|do not|dont) forget (to|about)\b|\bdon't let me forget\b|\bremind me (?:[^.!?]{0,50}? )?to\b|\bremember to\b|\bnot forget to\b|别忘了|不要忘了|提醒我|记得(要|把|去|给|提醒)?", re.IGNORECASE)

# "one thing that goes for every repo of mine: Conventional Commits", "btw 我所有 repo 都用 pnpm": a convention
# of the user's work wherever it is done (l1 scopes it global).
ALL_REPOS_RE = re.compile(
    # (with what kind of repo they are: "every python repo I have", "我所有 JS/TS repo 都一样").
    r"\b(?:all|every|each|any) (?:of )?(?:my|our) (?:[\w+#/.-]+ )?(?:repos?|repositories|projects?|codebases?)\b"
    r"|\bevery (?:[\w+#/.-]+ )?(?:repo|repository|project|codebase) (?:of mine|i (?:own|have|work on|touch))\b"
    # "for anything rust I touch not just this": whatever the user works on, this repo included.
    r"|\bfor any(?:thing| repo| project| codebase)(?: [\w+#/.-]+)? (?:i|we) (?:touch|write|own|work on|build|maintain)\b"
    r"|\bnot just (?:for )?(?:this|this one|this repo|this project|here)(?=[\s:：,.;]|$)"
    r"|所有的?\s*(?:[A-Za-z][\w+#/.-]{0,12}\s*)?(?:repo|仓库|项目|代码库|project)|每个\s*(?:[A-Za-z][\w+#/.-]{0,12}\s*)?(?:repo|仓库|项目|代码库)", re.IGNORECASE)

# "put it on the list", "can you add that to the backlog": what was just said, noted as a task.
ON_THE_LIST_EN = r"\b(?:put|add|stick|pop|write) (?:this|that|it) (?:down |up )?(?:on|to|in|into) (?:(?:the|my|our|your) )?(?:list|to-?do(?: list)?|todo\.md|backlog)\b"
# "not now, just write it down so it doesnt get lost": what the message says, noted for later ("don't write that down"
# asks to forget).
NOTE_IT_DOWN_EN = r"(?<!n't )(?<!nt )(?<!not )(?<!never )\b(?:just\s+)?(?:(?:write|jot|note) (?:it|that|this)|get (?:it|that|this) (?:written|jotted|noted)) down\b(?!\s+anywhere)"
ON_THE_LIST_RE = re.compile(ON_THE_LIST_EN, re.IGNORECASE)
NOTE_IT_DOWN_RE = re.compile(NOTE_IT_DOWN_EN, re.IGNORECASE)
PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    # "I never eat pork", "we don't deploy on Fridays": about the speaker, not an order to the assistant.
    ("habit", re.compile(
        r"\b(i|we)\s+(always|never|usually|normally|typically|often|rarely|mostly|don't|do not|won't|avoid|try to)\b"
        # "we squash-merge everything here": what the team does with all of its work.
        r"|\bwe\s+[\w-]+(?:\s+[\w-]+)?\s+(?:everything|every (?:pr|commit|change|release|branch)|all (?:prs|commits|changes|branches))\s+(?:here|in this repo)\b"
        r"|我(们)?(从不|从来不|一直|总是|一般|通常|向来|不(吃|喝|用|碰|抽))", re.IGNORECASE)),
    ("task_done", re.compile(
        r"\b(i|we|i've|we've|have)\s+(finished|completed|fixed|shipped|merged|resolved)\b|\b(is|are)\s+(done|finished|fixed) now\b"
        r"|已(经)?(完成|修复|搞定|做完|上线|合并)|(做|搞|修)完了", re.IGNORECASE)),
    ("task", REMINDER_RE),
    ("instruction", ALL_REPOS_RE),
    ("instruction", re.compile(
        r"\b(always|never|don't|do not|make sure (to|you)|from now on|going forward|in future|please (always|never|use|reply|answer|write|keep|avoid)"
        r"|remember that|you should (always|never)|should (not|never|only|always)(?! have\b)|shouldn't(?! have\b)|must (not )?|avoid|prefer \w+ over|only use|stick to|no more than|keep (it|them|answers|replies|explanations)"
        r"|call me|when (you|i) (answer|reply|ask|review|write|give|suggest|recommend|explain|talk)|whenever (you|i)"
        r"|(go|goes|belong|belongs) (in|under|into)|every new|rule for|rules for|conventions? (for|:)|rule:"
        r"|(has|have|needs?) to (pass|be green|be clean|stay green|stay clean)|must (pass|be green|be clean)"
        r"|(that's|this is|here's) (the|a|our) (rule|convention|policy)|the (rule|convention) (in|here|of this))\b"
        # "And no calorie numbers please.", "please no emojis": what never to give.
        r"|^(?:and |also |oh and )?(?:no (?!thanks|worries|problem|rush|idea|need)[\w-]+(?: [\w-]+){0,3},? please\b|please,? no [\w-]+)"
        # "Distances in miles please.", "answers in bullet points please": the form to give things in.
        r"|^(?:and |also )?(?!(?:put|leave|drop|throw|place|store|stick|set)\b)[\w-]+(?: [\w-]+)?\s+in\s+[\w-]+(?: [\w-]+)?,?\s+(?:please|pls)\s*[.!]?\s*$"
        r"|以后|今后|总是|永远|不要|别再|务必|必须|禁止|一律|记住|请(始终|总是|用|使用|回答|回复|保持|避免)|统一(用|使用)?|避免|尽量|只用|只能|规则|约定|规范|规矩|不允许|不许|不准(?=\s*[\w\u4e00-\u9fff])"
        r"|才能\s*(合并|上线|发布|提交|部署|merge|publish|release|deploy|commit|ship|push|go live)|以上才|至少要|\b(before|to) (merge|merging|release|deploy)\b"
        r"|要求\s*[^，,。；;]{0,8}?\d|\b(requires?|required|needs? to be|has to be)\b[^.;,]{0,30}?\d"  # a requirement with its figure ("要求 1 秒内可见")
        r"|叫我(?!去|来|们)|(回答|回复|解释|跟我说话|和我说话|跟我聊天|给我|推荐)[^，,。；]{0,12}?的时候|(?:回复|回答|回我)(?:里|中|时)?\s*(?:别|不要|少)(?=\s*[用带加写发])|(?:^|[，,。；;])\s*别(?!人|的|处)", re.IGNORECASE)),
    ("preference", re.compile(
        r"\b(i|we) (really )?(prefer|like|love|hate|dislike|enjoy|favou?r|tend to|can't stand|am into|'m into)\b|\bmy (preferred|favou?rite)\b|\bi'?d rather\b"
        r"|\b(i'm|i am|we're|we are) (not )?(a big fan|not a fan|fond|big on|a fan of|into)\b|\bi (think|feel|believe) (that )?\w+"
        r"|我(比较|更|很|不|最|特别|超)?(喜欢|偏好|习惯|讨厌|爱|倾向|受不了)|我们(习惯|偏好)|偏好|我觉得", re.IGNORECASE)),
    # An explicit to-do wins over the decision it may mention ("下一步要把负采样改成…").
    ("task", re.compile(r"\b(todo|to-do|next step|still have to|need to|needs to|for the backlog|next task)\b|^next\s*:|^\W*(?:(?:yes|yeah|yep|sure|thanks|thank you|ta|cheers|cool|great|nice|perfect|lovely|brilliant)\b[^.!?:]{0,12}[.!,]\s*)?(?:(?:ok|okay|so|right)[,，]?\s+)?(?:the\s+)?(?:next|first|second|another|bigger|big|main|future)(?: real| big| bigger| small| main)? (?:thing|task|item|job|feature|piece of work|bit of work|one)\b[^:：.!?]{0,40}[:：]|^(?:下一个|下个|接下来的?|第一个|另一个|另外一个|还有一个)\s*(?:(?:大|小|big |small )?\s*(?:活|任务|需求|事|功能|item|task|thing|feature)|大的|小的)\s*[:：]|^(?:下一个|下个|接下来)(?:想|要|打算)做的(?:是|就是)|待办|下一步|接下来要|还要|要把|还需要"
                        r"|下一个\s*(?:任务|task|待办)"
                        # "下个 sprint 的 task 先记一下: 直播回放自动切片 …".
                        r"|(?:task|任务|待办|需求)\s*先记(?:一下|下来|着)"
                        r"|" + ON_THE_LIST_EN + r"|" + NOTE_IT_DOWN_EN + r"|\bon the (?:to-?do list|backlog)\b"
                        # "one for the list, not now: before the end of june we need every incoming item … checked".
                        r"|\b(?:one|one more|another one|another|something) for the (?:list|to-?do list|todo list|backlog)\b"
                        # "also I want a tool that replays a captured decoder stream so I can test at home": a feature wanted.
                        r"|\bi (?:want|need|'d like) (?:a|an) (?:new )?(?:tool|script|command|page|screen|endpoint|report|button|option|dashboard) (?:that|which|to)\b"
                        r"|(?:加到|放进|记到|列进)(?:待办|todo|清单|backlog)"
                        # "before end of June I want scaffold hire as its own line on quotes": what is wanted, by when.
                        r"|\b(?:before|by) (?:the )?end of \w+\b[^.!?]{0,30}?\b(?:i|we) (?:want|need)\b|\b(?:i|we) (?:want|need)\b[^.!?]{0,60}?\b(?:before|by) (?:the )?end of \w+",
                        re.IGNORECASE)),
    ("decision", re.compile(
        r"\b(we|i) (decided|agreed|chose|picked|settled on|will use|'ll use|are going with|switched to|are switching to|moved to|migrated to|are moving to)\b"
        r"|\bwe'?re (?:moving|switching|migrating) to\b"
        # "So we're slowing the polling right down: once every 5 minutes": a setting turned up or down.
        r"|\bwe'?re (?:slowing|speeding|cutting|bumping|turning|dialling|dialing|scaling|ramping) (?:the |our )?[\w-]+(?: [\w-]+)? (?:right )?(?:down|up|back)\b"
        r"|\blet'?s (go with|use|switch to|stick with|split|keep|move|batch|drop|go for|cache|pin)\b|\bdecision\b|\bwe('re| are) going to\b|\bwe'll go with\b"
        r"|决定|改用|换成|改成|改为|采用|就用|定为|选用|确定用|定下来|迁移到|迁到|设成|设为|设置为|调成|调到|(?:先|就)这么定"
        # "就按你上次说的 Redis INCR + Feistel", "接口路径就定 /api/report/leakage 吧", "先 MySQL 按月分表顶着".
        r"|(?<![交转切])换\s+(?=[A-Z])|就按(?:你|我们)?(?:上次|之前|刚才|前面)?(?:说|讲|提|定)的\s*[^，,。；;！!\s]{2,}|就定(?:成|为|在)?|先[^，,。；;]{1,20}?顶着"
        # "用 Spring 自带的 @Scheduled 每分钟扫一遍就行": what to use, said as enough.
        r"|^用\s*[^，,。；;！!？?]{2,40}?(?:就行|就好|就可以|就够了|即可)", re.IGNORECASE)),
    ("task", re.compile(
        r"\b(todo|to-do|need to|needs to|we should|i should|next step|later (we|i)|still have to|have to|follow[- ]up|i'?ll (need|have) to|i'm going to|i plan to|i'm planning to|planning to)\b"
        r"|\bdeadline\b|\bdue (on|by)\b"
        r"|待办|需要|要做|下一步|回头|稍后|还没|得把|还要|计划|打算|准备(去|要)?|(下周|下个?月|下礼拜|明天|这周|今天|之后|月底前?)要|要把|截止"
        # "明年开春之前要上车牌识别 … 先记下来": by when, and said to be noted.
        r"|之前要|先记下来|先记着"
        # "9 月开学要干一件大事：2019 年那批磁带录音要批量导进平台": a big piece of work announced.
        r"|(?:要|得)(?:干|做|搞)(?:一件|件|个|一个)大(?:事|活|工程|项目)"
        # "9 月开学前要上一个入学查验的功能": a feature to build, by when.
        # "然后要能出报价单 PDF 发给客户": what the system must be able to do.
        r"|(?:^|然后|还|也)要能(?=\s*(?:出|导出|生成|打印|发|查|看|搜))"
        r"|(?<=前)要(?=上|做|加|写|搞|开发|完成|交)|要(?:上|做|加|开发|写)(?:一个|个)[^，,。；;]{1,20}?(?:功能|模块|页面|接口|报表)"
        # "正事: 要加 food diary 的 photo upload": what is to be added, said first.
        r"|(?:^|[:：]\s*)要加\s*(?=[A-Za-z]|[\u4e00-\u9fff]{2,}(?:的|功能|模块|页面))(?!班|油|钱|急|快|强|上)", re.IGNORECASE)),
    ("persona", re.compile(
        r"\b(i am|i'm|im) (a|an|the)\b|\bmy name is\b|\bi work (as|at|in|on|for|from)\b|\b(my )?day job\b|\bi (do|run|maintain) this (as|in|on) (a |my )?(volunteer|hobby|side project|spare time|free time)\b|\bi live (in|near|with)\b|\bi(?:'m| am) from\b"
        r"|\b(i|we) (don't|do not|never|can't|cannot) (eat|drink|have|take|touch|do)\b|\ballergic\b|\ballergy\b|\bintolerant\b"
        r"|\bi('m| am) (vegetarian|vegan|pescatarian|diabetic|pregnant|left-handed|married|single|divorced|retired|colou?r-?blind|self-employed|remote|based in)\b"
        r"|\b(my|our) (wife|husband|partner|son|daughter|kids?|children|baby|brother|sister|mom|mum|mother|dad|father|parents|grandma|grandmother|grandpa|"
        r"grandfather|aunt|uncle|cousin|niece|nephew|friend|best friend|boss|manager|colleague|coworker|roommate|flatmate|neighbou?r|girlfriend|boyfriend|"
        r"fianc[ée]e?|ex|dog|cat|puppy|kitten|pets?|bird|rabbit|hamster|job|role|team|company|employer|birthday|hometown|home|flat|apartment|house|commute|"
        r"doctor|therapist|mother tongue|native language|first language|office|laptop|editor|shell|keyboard|setup|schedule|standup|gym|diet)\b"
        r"|\bi (speak|use|drive|ride|cycle|bike|walk|commute|run|swim|play|cook|practi[cs]e|teach|study|learn|take|eat|drink|wake up|get up|get home|go to bed|leave work|start work|call)\b"
        # What the user did before ("i taught chemistry at a secondary school for 11 years", "I used to
        # work in a bank"), and a lead that says it is about them ("background on me: …").
        r"|\bi (taught|used to (teach|work|be)|worked (as|at|in|for)|was (a|an) [\w-]+(?: [\w-]+)? (at|for|in))\b|^(a bit of |some |quick )?(background|context) on me\b|^(a bit |quick )?about me\s*[:：]"
        r"|\bi get (\w+ )?(sick|seasick|carsick|migraines?|headaches?|anxious|nervous|cold)\b|\b(my )?doctor (said|says|told)\b|\bwe('ve| have) (a|an|two|three|got)\b"
        r"|\bi weigh\b|\bmy (weight|blood pressure|blood sugar|back|knee|health|sleep)\b|\bi('m| am) \d+ (years old|kg|pounds)\b|\bi('ve| have) (a|an|two|three|four|been|had|got)\b|\bi('m| am) (learning|studying|training for|taking|on)\b"
        r"|\bi (usually|normally|typically|often|rarely|mostly|always|never)\b|\bevery (morning|evening|night|day|week|weekday|weekend|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
        r"|我(每)?(周|星期|礼拜)[一二三四五六日天]|\bon (mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends)\b|我(?:白天|平时|晚上|现在|目前|本职|主业)?是|我叫|我在.{1,24}(工作|上班|上学|读书|读|念|出差)|我(?:白天|平时|现在|目前|本职|主业)?在[^，,。]{1,24}?(?:做|当)\s*[\w\u4e00-\u9fff]|我(?:是)?(?:做|干|搞)(?!了|过|完|好|的)[^，,。]{1,12}的(?=[，,。！!]|$)|我住在|家里(有|养)|养了|(医生|医院|兽医|大夫)(说|让|建议|开了|给了)|我.{0,12}(受过伤|受伤|有点问题|不太好|疼|过敏)|我住|我来自|我老家|我(不|从不|不能|没法)(吃|喝|碰)|过敏|吃素|素食|我(每天|每周|平时|一般|通常|经常|周末)"
        r"|(?:(?-i:[A-Z])[\w&.'-]+|大学|学院|高中|中学)\s?(?:读的|念的|毕业的)(?!书|报|文)|体重|身高|血压|血糖|怀孕|失眠|住院|手术|吃药|我(会说|在学|学了|用的是|用)|我有(一|两|三|个)|我家|我们家|我的?(妻子|老婆|老公|丈夫|爱人|对象|孩子|儿子|女儿|宝宝|哥哥|弟弟|姐姐|妹妹|爸爸|妈妈|爸|妈|父母|"
        r"爷爷|奶奶|外婆|外公|朋友|同事|老板|领导|导师|老师|上司|室友|男朋友|女朋友|前任|狗|猫|宠物|工作|职业|生日|家乡|母语)", re.IGNORECASE)),
    ("episode", re.compile(
        r"\b(yesterday|today|tonight|this (morning|week|weekend)|last (week|night|month|year|weekend|summer|winter|spring|fall))\b"
        # "two weeks ago bin 14 started heating", "三天前 …": a time back from now.
        r"|\b(a|an|a couple of|a few|few|two|three|four|five|six|seven|eight|nine|ten|\d+) (days?|weeks?|months?|years?) ago\b"
        # (Not "干了八年前厅经理": a span worked, then a word that starts with 前.)
        r"|(?<!第)(?<![了过满])[一两二三四五六七八九十几\d]+\s*(?:天|周|个星期|个礼拜|个月|年)前(?![面边厅台线端排锋额夕门沿景提])"
        r"|\b(i|we) ((also|just|finally|recently|already|even) )?(went|visited|met|bought|sold|started|moved|travel(l)?ed|had|got|made|painted|joined|adopted|signed up|saw|watched|read|tried|won|lost|found|received|"
        r"finished|took|attended|ran|hiked|celebrated|cooked|baked|wrote|built|booked|flew|drove|spent|quit|left|broke|stayed)\b|\b(i|we)('ve| have) been to\b"
        r"|\b(recently|lately)\b|最近|昨天|今天|今晚|上周|上个月|去年|刚才|刚刚|前天|周末|今早|去了|见了|买了|搬到|参加了|报名了|看了|做了|养了", re.IGNORECASE)),
    # What the people the user talks about like ("she loves drawing"): after the events they appear in.
    ("preference", re.compile(
        r"\b(he|she|they) (loves?|likes?|hates?|adores?|is into|'s into|are into|prefers?)\b|(她|他)(们)?(比较|很|最|特别|超)?(喜欢|爱|讨厌|迷上)", re.IGNORECASE)),
    ("fact", re.compile(
        r"\b(uses|is using|runs on|runs in|lives on|sits on|is hosted on|runs every|runs nightly|depends on|is deployed|is hosted|listens on|port \d+|version\s*(?:is\s*|=\s*|:\s*|是\s*|为\s*)?v?\d+|is stored in|lives in|is configured"
        r"|is written in|is built (with|on)|talks to|writes to|reads from|is backed by|is served by|(pulls|loads|reads|writes|pushes|sends|syncs|publishes) (from|into|to))\b"
        r"|\b(?:is|are) valid for \d+ (?:days?|weeks?|months?)\b"  # "quotes are valid for 30 days": a term of the business
        r"|\b(is|are) (the|a|an|our) ([\w+.-]+ ){0,3}(service|app|application|tool|library|package|repo|repository|project|cli|api|backend|front ?end|pipeline|job|bot|site|website|system|module|monorepo|chart)\b"
        # "wicketbook = club app for Hollins Green CC": a name set equal to what it is.
        r"|^(?:context[.:]\s*)?[\w.-]{3,30}\s*=\s*(?:the |a |an |our )?([\w+.-]+ ){0,3}(app|application|tool|service|site|website|system|bot|platform|backend|api)\b"
        r"|\b(this|it) is (the|a|an|our)\b|\b(state|config|configs|secrets|data|logs|code|tests|docs) (is|are|lives|live|sits|sit) in\b"
        r"|\b(is|are|has|have|set to|runs with) \d+ (replicas|nodes|brokers|partitions|workers|gb|cores|ms|seconds|minutes|hours)\b"
        r"|\b(the|our|this) (api|server|database|db|service|build|ci|config|repo|repository|project|codebase|backend|frontend|app|pipeline|job|cluster|stack|deploy|worker|queue|cache)"
        r" (is|uses|runs|needs|has|handles|does|lives|loads|pulls|pushes|sends|stores|talks|writes|reads|deploys|builds|targets)\b"
        r"|\bwe (use|run|deploy|host|ship|build|keep|store|are on|'re on)\b|\b(the )?stack is\b|\bit('s| is) (a|an|our) \w+"
        r"|\bby default\b|\bdefaults? to\b|默认(?:是|用|输出|值|为|开|关|走|就)"
        # "signed with DPD last week", "我们已经开好 Billplz 的 account 了", "已经跟顺丰同城签了月结": a provider taken on.
        r"|\b(?:signed (?:up )?with|opened an? account with|set up an? account with)\b|(?:已经|刚)(?:跟|和)[^，,。；;]{1,20}签了|(?:已经|刚)?开好了?[^，,。；;]{1,20}(?:account|账号|账户)"
        # "我本身是学工业设计的，code 半路出家": who is writing the code.
        r"|我(?:本身|其实|自己|本来)?是(?:学|读|做|搞)[^，,。；;]{2,12}?(?:的|出身)|我(?:本人)?(?:以前|之前|原来|本来)在[^，,。；;]{1,12}(?:干|做|当|上班|工作)"
        r"|我(?:本科|大学|研究生|硕士)?学的是?[^，,。；;]{2,10}|我(?:本职|本行|本身|平时|其实|本来)*是(?:一名|一个|个)?[^，,。；;]{0,8}?(?:工程师|设计师|程序员|老师|教师|医生|护士|会计|律师|产品经理|分析师|研究员)"
        r"|每(周|天|月|年|个?星期|个月)|在.{1,20}上(跑|运行|训练|部署)|部署在|运行在|跑在|(?:用|通过)[^，,。]{1,16}?部署|服务器是|依赖|端口|版本|配置在|存放在|存在|使用的是|用的是|数据库是|项目(是|用)|这个\s*(项目|仓库|服务|工程|库|repo|app|service)|本(项目|仓库)|我们(?:是|都是)?(用|使用|的)|我们(?:主要|基本上?)(?:是)?(?:做|看|卖|接|服务|面向)|我们有(?:[一两二三四五六七八九十几\d])|基于|写的"
        r"|(是|有|为)\s*\d+\s*(个|台|张|核|G|GB|ms|秒|分钟|小时|天|次|%)"
        # "这是公司 CRM 的管理后台，Vue 3 + …": what the project is; "minSdk 是 26": a setting's value.
        # "hi hi 👋 这个是我们 tuition centre 的 admin system": greetings and emoji before it, the kind said in English.
        r"|^(?:(?:hi|hey|hello|嗨|你好|早)[，,!！~～\s]*)*(?:[\U0001F300-\U0001FAFF\u2600-\u27BF]\s*)*这(是|个是)(我们|公司|团队|一个|我们公司|我的|我)?.{0,24}?"
        r"(后台|服务|项目|仓库|系统|平台|工具|应用|app|网站|小程序|插件|脚本|sdk|框架|repo|blog|博客|system|site|platform|backend|service|tool)"
        r"|\b[A-Za-z][A-Za-z0-9_.]*[A-Za-z0-9]\s*(是|为)\s*v?\d", re.IGNORECASE)),
]
ARTIFACT_RE = re.compile(
    r"\b(created|added|wrote|generated|saved|new file|new (?:management )?command|new (?:script|endpoint|migration|module|table)|renamed|moved|exported|published|updated|modified|edited|rewrote"
    r"|changed|fixed|replaced|converted|refactored|switched)\b"
    # "Made `horses/reports/horse_card.py`.", "I built …": done by the one who reports it ("InfluxDB is built for …" is no report).
    r"|(?:^|\b(?:i|we|i've|we've|i have|we have)\s+)(?:made(?! sure\b)|built|implemented)\b"
    # "Written: `docs/station-onboarding.md`. Sections: …" (not "the config is written in YAML").
    r"|^\W*written\b|\b(?:i've|we've|i have|we have)\s+written\b"
    r"|创建了?|新建了?|生成了?|写了|添加了?|保存(了|到)|导出了?|已修改|修改了|已更新|更新了|改写了|已替换"
    # A change said as done ("我在 store.go 里改成了 …", "feature_client.py … 改成 pipeline 批量取了").
    r"|改(成|为)了|改(了|好了)|修(好)?了|替换了|换成了|补了|加了|(改成|改为)[^，,。；;]{1,40}了"
    # "写好了，在 src/report/export-grades.ts", "写在 strategies/low_turnover_roe.py", "我把 signal 整体 shift(1)".
    # "校验逻辑单独写成了 `scripts/check_ipa.py`": made into a file of its own.
    r"|写好了|写在|写成了|实现了|建好了|加好了|^我把"
    # "新增 `lib/plate.ts`，`normalizePlate()`：…": a report that opens with what is new.
    r"|^\W*新增(?!加)",
    re.IGNORECASE,
)
# A question: a question mark, "吗/呢" at the end, or an interrogative opening a sentence that
# does not end as a statement ("When you suggest recipes, assume …." and "What I need is …."
# are statements; "what's a good gift for him" is a question).
QUESTION_RE = re.compile(
    # ("What I did treat myself to is a new cue, …": what the user did, said as "what … is".)
    r"[?？]\s*$|^(what(?!\s+(?:i|we)\s[^?]{0,50}?\b(?:is|was|are|were)\b)|how|why|when|where|which|who|can you|could you|do you|is it|are there)\b(?!.*[.。!！]\s*$)|吗[?？]?$|呢[?？]?$"
    # "你说用个植物补光灯会不会开得更好 我在网上看到有人用": the user's opinion asked for, without a question mark.
    r"|^你说[^，,。！!]{0,30}?(?:会不会|能不能|要不要|是不是|好不好|行不行|有没有用)",
    re.IGNORECASE)
# One-off requests to the assistant ("can you rename this", "帮我看一下") are work, not memory.
# ("change to the timed sales. from the October sale we start closing at 8pm instead": a change announced, not asked for.)
REQUEST_RE = re.compile(
    r"^(please |pls |ok,? |okay,? |now,? |also,? |and )?(can|could|would) you\b|^(please )?(fix|run|show|check|look at|rename|refactor|explain|add|remove|delete|update(?!\s+on\b|\s*[:：.!！。,，—–-]|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF])|write|give me|try|change(?! of plans?\b)(?!\s+to\s+(?:the|our|my)\s+[^.!?:：]{1,40}[.:：]\s)|move|open)\b(?!.*\b(always|never|from now on|going forward)\b)"
    r"|(?:^|[，,。；;])\s*(那|那么|好|好的)?[，,]?\s*(请|麻烦|能不能|可不可以|可以|你能|你可以|你)?\s*(帮我|麻烦你?|给我)(?:给[^，,。\s]{1,6}?)?(看|查|改|跑|写|加|删|把|解释|运行|生成|整理|算|推荐|导|画)(?!了|过)"  # "给我加了单腿蹲": done, not asked
    r"|^(请)?你(先)?(看|查|改|跑|写|加|删|把)", re.IGNORECASE)
CODE_TYPES = {
    "habit": ("work_method", 80),
    "instruction": ("work_method", 80),
    "preference": ("work_method", 75),
    "decision": ("work_fact", 75),
    "task": ("work_task", 70),
    "task_done": ("work_task", 60),
    "fact": ("work_fact", 60),
    "artifact": ("work_artifact", 55),
    # A code session's plain statements about the team, its schedule or what happened are
    # work facts: never dropped for lack of a type.
    "persona": ("work_fact", 60),
    "episode": ("work_fact", 55),
}
CHAT_TYPES = {
    "habit": ("persona", 75),
    "instruction": ("instruction", 85),
    "preference": ("persona", 75),
    "persona": ("persona", 70),
    "decision": ("episodic", 60),
    "episode": ("episodic", 55),
    "task": ("episodic", 50),
    "task_done": ("episodic", 50),
    "fact": ("persona", 60),  # a plain statement in a chat is about the user's life: never dropped for lack of a type
    "artifact": ("episodic", 45),
    "statement": ("persona", 55),  # no pattern's words, but about the user (plain_statement)
    "statement_event": ("episodic", 50),
}


# Anaphoric follow-ups: a sentence that only points at what was said before.
ANAPHORA_RE = re.compile(
    r"^(and |also |oh,? and )?(do|apply|same|the same|that goes|this goes|that applies|this applies|ditto)\b.{0,60}$"
    r"|\b(the two|both of them|these two|those two|the same (way|rule|thing|for)|do the same|same (for|goes|with)|(stick|keep) (to|with) (that|this|those|these|it))\b"
    r"|^(以后)?(都|也)?(照|按|依)(这|此|这个|上面)(个|样|来|办|做)|照这个来|按这个来|也一样|同样(处理|适用|的)|这两个(?!月|星期|礼拜|小时|钟头|周末)|都这么(做|办|来)|就这样(做|办)?[。！]?$"
    # "…用 FastCDC 切块。这个先记 TODO，下个月再搞": note down what was just said.
    r"|^(这个|这些|这条|这事|那个)(先|也|就)?(记|写|放|加)(一下|下来|下)?(进|到|在)?\s*(todo|待办|清单|list)"
    # "…挂到商品详情页. 写进 TODO": the sentence before, noted down.
    r"|^(先|也|就)?(写|记|放|加)(进|到|在)\s*(todo(\.md)?|待办|清单|backlog)\s*(里|吧|哈)?\s*[。.!！]?$"
    # "… I need the invoices going into Xero. can you put it on the list".
    r"|^(?:(?:can|could|would) you |please |pls )?" + ON_THE_LIST_EN,
    re.IGNORECASE,
)
# A user's acceptance of what the assistant just proposed.
ACCEPT_RE = re.compile(
    r"^(yes|yep|yeah|yup|sure|ok(ay)?|sounds good|perfect|great|exactly|agreed|absolutely|correct|right|do it|go ahead|please do|let'?s do (it|that)|lgtm|love it|works for me)\b"
    r"|\b(add (that|this|the) (rule|convention|setting|check)|exactly what (we|i) want|that's what (we|i) want|make (that|it) (a|the) rule|keep (that|it) as a rule)\b"
    # A one-character yes is a word of its own: "行前班就不报了" speaks of a pre-departure class, "好像…" and "可以帮我…"
    # are no answers.
    # ("对了，…" is "by the way".)
    r"|^(好|好的|行|可以)(?=[\s,，。.!！~～:：;；吧啊呀了嘞哈的呢啦滴哒嗯对好行👍]|$)|^对(?=[\s,，。.!！~～:：;；吧啊呀的呢啦对👍]|$)|^(没错|同意|就这么办|就这样|没问题|加上吧|就按(这个|你说的)(来|办)?)"
    r"|就按(这个|你说的)|就这么(办|定)|这个规则(加上|可以)|正是我(们)?想要的",
    re.IGNORECASE,
)
# "ha no, no instagram", "god no, …": a laugh or an oath before the no ("oh no, …" is no answer: it exclaims).
_LAUGH_LEAD = r"(?:(?:ha|haha|hah|lol|heh|hmm|um|erm|god|oh god|hell)[,!.\s]+)?"
DECLINE_RE = re.compile(rf"^{_LAUGH_LEAD}(no|nope|nah|not now|don't|do not|skip (it|that)|never mind|no thanks)\b|^(不|不用|不要|算了|先不|别)", re.IGNORECASE)
# The decline said as a word of its own ("不要，…", "No, …", "先不要。…"): the no is not a
# rule; what follows it is a sentence of its own. "别在后端拼 +8" has no separator: the
# "别" belongs to the rule and the sentence is kept whole.
DECLINE_LEAD_RE = re.compile(
    r"^\s*" + _LAUGH_LEAD + r"(?:(?:no way|no thanks|nope|nah|no|not now|not yet|never mind|skip (?:it|that)|不用|不要|先不要|先不用|先不|算了|不必|不|别)"
    r"(?:了|吧|啦|呢|\s*(?:lah|la|leh|lor|ah)\b)?\s*)+(?:[,，。.!！;；:：]+|\s+[—–-]+)\s*",
    re.IGNORECASE,
)


# "Casbin先不要。", "耳机那个不行不行。", "free-standing 的不要啦": the proposal's name and a refusal, nothing else (one of the
# refusals below; refused_name() reads the name from it).
_REFUSAL_BY_NAME = (r"^(?P<name>[A-Za-z][A-Za-z0-9.+-]{1,30}(?:\s+(?!no\b)[A-Za-z][A-Za-z0-9.+-]*){0,2}|[\u4e00-\u9fff]{2,6}?"
                    r"|[A-Za-z0-9]{1,6}[\u4e00-\u9fff]{1,5}?)\s*(?:那个|这个|那种|这种|的)?\s*"  # ("e签宝 不要 一年好几千块")
                    # ("高压电工不考 那个活风险大", "小红书不发 …")
                    # ("creatine 我不要, thanks.")
                    r"(?:我们?)?(?:就|还是|先|暂时)?(?:不要|不用|算了|免了|不考虑|不上|不搞|不做|不弄|不加|不报|不买|不租|不装|不试|不考|不学|不发|(?<!的)不接|不行(?:不行)?"
                    # "水光针 no no no 我晕针": an English no after a Chinese name, in mixed writing ("wait no, …" refuses nothing).
                    r"|(?:(?<=[\u4e00-\u9fff])|(?<=[\u4e00-\u9fff]\s))no(?:\s+no)*(?!\s+(?:longer|more|one|way|need|idea|problem)\b)"
                    # "Instagram no no no.": after a Latin name, a no said twice or more.
                    r"|(?<=[A-Za-z0-9]\s)no(?:\s+no)+(?=\s*[.!。！,，]|\s|$)"
                    # "Duolingo, no. I had a 200-day streak …": the name, a comma, a no of its own.
                    # ("Comme il Faut, no thanks, £200+ for a pair of shoes …".)
                    r"|(?<=[A-Za-z0-9])[,，]\s*(?:no(?:\s+thanks)?|nope|nah)(?=\s*[.!。！,，]))(?:了|吧|哈|啦|呀|哦|喔)?"
                    # "planner 不用啦 hahaha 我本身就是做 UX 的": a laugh after the refusal.
                    r"(?:\s*(?:(?:ha)+h?|lol|哈+)\b)?\s*(?:[，,。.!！]|\s|$)")
_REFUSAL_BY_NAME_RE = re.compile(_REFUSAL_BY_NAME, re.IGNORECASE)
# "不要人脸识别 来卖纸板的…", "不要 mobile app 啦，…": the refusal first, then what is refused. A rule is said
# the same way ("不要用太多注释"), so it refuses only a name the proposal itself used (units.py checks).
# "不找中介 我同事找了 花了一万八 …", "不换 high bar 我练了三年 …": the verb of the proposal refused with its object.
_DONT_NAMED_RE = re.compile(r"^(?:不要|不用|不加|不考虑|不搞|不做|不上|不找|不换|不报|不买|不装|不请|不试|不订|不租)\s*(?P<name>[A-Za-z][\w.+-]*(?:\s+[A-Za-z][\w.+-]*){0,2}|[\u4e00-\u9fff]{2,8}?)"
                           r"\s*(?:啦|了|吧|哈)?(?=\s*[，,。.!！]|\s|$)", re.IGNORECASE)


# A refusal said by naming what was proposed, or with the refusal last: "nah skip litestream.",
# "skip the dr tim's stuff, …", "Step On 太贵了，pass。", "inReach 就不租了吧", "蚂蚁链就算了哈，…",
# "佳明那个一千多块呢，算了不买了。".
# The sentence is the refusal and its reason: not a fact to keep.
# "录音复盘可以，": one proposal taken, before another is refused.
_TAKEN_THEN = r"^[^，,。.!！?？]{1,20}?(?:可以|没问题)(?:[，,]\s*|\s+)(?:但是?|不过|就是)?\s*"  # ("拍视频可以 但是小红书不发")
NAMED_DECLINE_RE = re.compile(
    r"^(?:(?:nah|no|nope|ok|okay|hmm)[,，.!\s]*)?skip\b|[,，]\s*pass\s*[.。!！]*$"
    # "no digital chanter. the whole point is the real sound", "超声波 pass，我还是信时间": the proposal named and
    # turned down in a few words of their own.
    # "not doing the green banner. everyone I know who's had Open to Work on says …", "nah not doing masters. went once
    # years ago, …": what was proposed, not done.
    r"|^(?:(?:nah|no|nope)[,，.!\s]+)?not (?:doing|using|adding|trying|getting|buying|going with) (?:the |a |an |any |that )?[\w.+'-]+(?:\s+[\w.+'-]+){0,3}\s*[.!]+(?:\s|$)"
    # "no guided walk thanks, I've looked at them.": with its thanks ("nah no brace thanks. physio …": after a no of its own).
    r"|^(?:(?:nah|nope)[,，.!\s]+)?(?:no|not(?:\s+the)?)\s+[\w.+'-]+(?:\s+[\w.+'-]+){0,2}(?:\s*[.!]+|,?\s+(?:thanks|thank you|ta|cheers)\s*[.!,]*)(?:\s|$)"
    # "no thanks on the Alexander Technique.": the thanks first, then what is turned down.
    r"|^no,?\s+(?:thanks|thank you)\s+(?:on|to)\s+(?:the\s+)?[\w.+'-]+(?:\s+[\w.+'-]+){0,2}\s*[.!]*(?:\s|$)|^[^，,。.!！?？\s]{1,20}\s*pass(?=\s*[，,。.!！]|\s*$)"
    # "no, leave PagerDuty out.", "nah leave IMSLP out.": the proposal left out by name.
    r"|^(?:(?:nah|no|nope)[,，.!\s]+)?leave\s+(?:the\s+)?[\w.+'-]+(?:\s+[\w.+'-]+)?\s+out\b(?!\s+of\b)"
    r"|^[^，,。.!！?？]{0,16}?(?:就|还是|先|暂时)?(?:算了|免了|不(?:买|租|装|用|要|试|加|考虑|上)了)|[，,]\s*(?:那)?(?:就|还是)?算了"
    # "录音复盘可以，发抖音不行": one proposal taken, the other refused after it.
    r"|" + _TAKEN_THEN + r"[^，,。.!！?？]{1,12}?(?:不行|不要|算了|免了|不考虑|不搞|不做|不发)"
    # "Clash 我 demo 过一次 … Blade 用惯了 不想换": the proposed name first, the refusal last.
    r"|^[A-Za-z][\w.+-]{1,30}\s.*(?:不想换|不换了|不想(?:买|试|用|要|折腾)了?)\s*[。.!！]?\s*$"
    # "sevDesk 那种一个月十几欧的 subscription 我真的不想再加了，…我用 Google Sheets 自己记就行": the
    # refusal ends the proposal's clause; the user's own way follows it.
    r"|^[A-Za-z][\w.+-]{1,30}\s[^。.!！?？，,]*?不想再?(?:换|加|买|试|用|要|折腾|订|花)了?(?=\s*(?:[，,。.!！]|$))"
    r"|" + _REFUSAL_BY_NAME +
    # "thought about the orchestra idea — not for me.": the proposal named as an idea, then refused.
    r"|\b(?:idea|suggestion|thing)\s*(?:[—–-]+|[,，:：])\s*(?:not for me|no thanks|nah|pass|not happening)\b"
    # "I'll not do the MyHeritage thing.", "i'm not going to bother with the wearable idea": what was proposed,
    # named as "the … thing", and refused.
    r"|\b(?:i'?ll not|i will not|i won'?t|i'?m not (?:going to|gonna)|not going to)\s+(?:do|bother with|go with|try|sign up for|get)\s+"
    r"(?:the|that|this|any of the)\s+[\w.+' -]{2,40}?\s+(?:thing|stuff|idea|route|option|suggestion)s?\b"
    # "I'll pass on the lip-reading classes, honestly.": passed on by name.
    r"|^(?:(?:nah|no|hmm|ok|okay|honestly)[,，.!\s]*)?(?:i'?ll|i will|i think i'?ll|i'?m going to|i'?m gonna|gonna)\s+(?:have to\s+)?pass on\b"
    # "not etsy, no.": the proposal named and refused; "not KT tape, it brings me out in an angry rash": and why.
    r"|^not\s+[\w.+-]{2,30}(?:\s+[\w.+-]+)?\s*[,，]\s*no\b|^not\s+(?:the\s+)?[\w.+'-]{2,30}(?:\s+[\w.+'-]+){0,2}\s*[,，—–]\s*(?:it|they|that|those|these)\b"
    # "private lesson 太贵了吧，S$900 够我飞回家两趟了": the proposal named, refused for its price.
    r"|^[A-Za-z][\w.+-]{1,30}(?:\s+[A-Za-z][\w.+-]*)?\s*(?:也|还是)?太贵了(?:吧|啊|哈)?\s*(?:[，,。.!！]|$)"
    # "弱音器我们班有人用过，一夹上声音闷得…，拉着一点意思都没有，不要。": the reasons first, the refusal last.
    r"|[，,]\s*(?:那)?(?:就|还是)?(?:不要|不买|不考虑|免了|没必要|没这个必要|用不着)(?:了|吧|啦|哈)?\s*[。.!！]*\s*$",
    re.IGNORECASE,
)


# A bill the project pays, said as such or complained of.
_BILL_PAID_RE = re.compile(r"的\s*bill|(?<!对)账单|太贵|很贵|好贵|吓死|\b(?:the|our|my|this month's|monthly)\s+(?:[\w-]+\s+)?bill\b|\bexpensive\b|\bcost(?:s|ing)? us\b",
                           re.IGNORECASE)
# Kinds of value whose plain statement in code mode is a rule of the business: a price, a rate.
BUSINESS_VALUE_KINDS = frozenset({"amount", "number:%"})


def decline_remainder(sentence: str) -> str | None:
    """What a decline reply says after its "no" ("" when nothing), or None when the
    sentence does not open with a decline word of its own."""
    match = DECLINE_LEAD_RE.match(sentence)
    if not match:
        return None
    rest = sentence[match.end():].strip()
    # The rest opens a sentence of its own: "No, we always use pnpm" → "We always use pnpm".
    return rest[0].upper() + rest[1:] if rest[:1].isascii() and rest[:1].islower() else rest


def refused_name(sentence: str) -> str:
    """The proposal a refusal names ("耳机那个不行不行" → "耳机", "no lah, Stripe 不要" → "Stripe", "不要人脸识别 …"
    → "人脸识别"), after a "no" of its own if there is one; "" when the refusal names nothing."""
    m = _REFUSAL_BY_NAME_RE.match(decline_remainder(sentence) or sentence.strip()) or _DONT_NAMED_RE.match(sentence.strip())
    if m is None:
        # "录音复盘可以，发抖音不行": one proposal taken, the other refused by name after it.
        taken = _TAKEN_THEN_REFUSED_RE.match(sentence.strip())
        m = _REFUSAL_BY_NAME_RE.match(sentence.strip()[taken.end():]) if taken else None
        if m is not None:
            return _DOING_RE.sub("", m.group("name"))  # "发抖音不行" refuses 抖音, also where it is 刷 later
    return m.group("name") if m else ""


_TAKEN_THEN_REFUSED_RE = re.compile(_TAKEN_THEN)


def mentions(text: str, name: str) -> bool:
    """Whether `text` names `name`: a Chinese name anywhere, a Latin one as a word of its own."""
    if not name:
        return False
    return name in text if is_chinese(name) else re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE) is not None
_DOING_RE = re.compile(r"^(?:发|用|做|上|装|买|开|搞|加|拍|写|去|学)(?=[\u4e00-\u9fff]{2})")


def names_offered(offer: str, name: str) -> bool:
    """Whether a proposal names what a refusal names: as said, or each word of a Latin name of several ("listwise LLM
    那个就算了" refuses "用一个 LLM 做 listwise rerank")."""
    words = name.split()
    return mentions(offer, name) or (len(words) > 1 and name.isascii() and all(mentions(offer, w) for w in words))


def refusal_remainder(sentence: str) -> str | None:
    """What the first sentence of a reply refusing a proposal says besides the refusal ("" when
    nothing), or None when it is no refusal of either kind. After a "no" of its own: the rest
    (decline_remainder). After a refusal that names the proposal (NAMED_DECLINE_RE): the refusal
    and its reason go ("nah skip litestream. daily snapshots plus …" keeps the second sentence),
    and the user's own news after the refusal's comma stands ("skip the dr tim's stuff, my
    coworker Dana is giving me …"; the reason alone — "蚂蚁链就算了哈，说白了就是个噱头" — does not)."""
    rest = decline_remainder(sentence)
    if rest and NAMED_DECLINE_RE.search(rest) and decline_remainder(rest) is None:
        return refusal_remainder(rest)  # "No, I'll not do the MyHeritage thing.": the no, then the refusal by name
    if rest is not None or not NAMED_DECLINE_RE.search(sentence):
        return rest
    pieces = re.split(r"(?<=[.!?。！？])\s+", sentence, maxsplit=1)
    after = pieces[1] if len(pieces) > 1 and NAMED_DECLINE_RE.search(pieces[0]) else ""
    clauses = re.split(r"[,，]\s*", pieces[0], maxsplit=1)
    if len(clauses) > 1 and NAMED_DECLINE_RE.search(clauses[0]) and FIRST_PERSON_RE.search(clauses[1]) and not mentions(clauses[1], refused_name(clauses[0])):
        # ("直播不做 🙅‍♀️ 一是我不想露脸，二是公司明确规定员工不能做财经类直播，…": what names the refused thing again is the
        # refusal's reason, not news of the user's own.)
        return " ".join(p for p in (clauses[1], after) if p)
    return after
PROPOSAL_RE = re.compile(
    r"\b(i suggest|i'd suggest|i recommend|i'd recommend|how about|what about|shall i|should i|want me to|would you like (me )?to|we could|you could"
    r"|consider|my suggestion|i propose|i'd propose|let me add|i can add|i could add|one option is)\b|建议|要不要|可以考虑|不如|我可以(帮你)?(加|添加|改|设)|是否需要|要我"
    # "Alternative: a small script of our own, `bin/seatmap_gen.py`, that …".
    r"|^\s*(?:an?\s+)?alternative\s*[:：]",
    re.IGNORECASE,
)
_PROPOSAL_LEAD_RE = re.compile(
    r"^(?:(?:so|ok|okay|then|also|alternatively)[,，]?\s*)?(?:i(?:'d)? (?:suggest|recommend|propose)(?: that)?|how about|what about|shall i|should i|do you want me to|want me to|would you like me to|would you like to"
    r"|we could|you could|consider|my suggestion is(?: to)?|one option is(?: to)?|let me|i can|i could)\s+"
    r"|^(?:我)?建议(?:你|我们)?[，,]?|^要不要|^可以考虑|^不如|^我可以(?:帮你)?|^是否需要|^要我(?:帮你)?|^\s*(?:an?\s+)?alternative\s*[:：]\s*",
    re.IGNORECASE,
)
_RULE_LEAD_RE = re.compile(r"^(?:add|adding|write down|record|keep)\s+(?:a|the|this)?\s*(?:rule|convention|note|check)\s*(?:that|:|：|saying)?\s*|^(?:加|添加|记)(?:一条|个)?(?:规则|约定)[：:，,]?\s*", re.IGNORECASE)


def proposal_of(text: str) -> str | None:
    """The content of what an assistant message proposes ("Shall I add a rule that X?" → "X"),
    or None when it proposes nothing lasting."""
    for sentence in split_sentences(text):
        if not PROPOSAL_RE.search(sentence):
            continue
        if OFFER_RE.search(sentence) and not DURABLE_RE.search(sentence):
            return None  # "Want me to compare it with single tickets?": done once, not remembered
        body = _PROPOSAL_LEAD_RE.sub("", sentence.strip()).strip()
        body = _RULE_LEAD_RE.sub("", body).strip()
        body = re.sub(r"[?？]+$", "", body).strip().rstrip(",，")
        if len(body) >= 8:
            return body[0].upper() + body[1:] if body[0].isascii() else body
    return None


@dataclass
class Candidate:

    content: str
    type: str
    priority: int
    category: str
    message: dict
    language: str
    task_state: str | None = None
    files: list[str] = field(default_factory=list)
    speaker: str = ""
    extra_messages: list[dict] = field(default_factory=list)  # further provenance (a follow-up's referent, an accepted proposal)
    position: int = 0  # the sentence's index in its message
    restated: bool = False  # the user says it again ("as I said", "提醒一下", "还是…的事"): dedup takes it for a repeat more readily


# "can you remind me on the 1st of every month to order mum's repeat prescription": asked, but for every time it comes round.
_RECURRING_REMINDER_RE = re.compile(r"\bremind me\b[^.!?]{0,60}?\b(?:every|each)\b|\b(?:every|each)\b[^.!?]{0,40}?\bremind me\b"
                                    r"|每(?:天|周|个?星期|个?礼拜|个?月|年)[^。！？!?]{0,20}提醒我|提醒我[^。！？!?]{0,20}每(?:天|周|个?星期|个?礼拜|个?月|年)",
                                    re.IGNORECASE)


# "also can you keep a training log for me? whenever I tell you what we did, add it": a record asked to be kept from now on.
_STANDING_ASK_RE = re.compile(r"\b(?:can|could|would|will) you (?:please )?(?:keep|maintain|start keeping|start|keep track of) (?:a|an|my|the) "
                              r"[\w' -]{0,30}?\b(?:log|list|diary|journal|tally|tracker|record)\b(?: of [^?.!]{1,40}?)?(?: for me| going)?\s*[?？.!]*$", re.IGNORECASE)


# The form a kind of thing is always to come in ("and write practice plans as a table, with the minutes for each
# block"): a plural object makes it every one of them, where "write this as a table" is for the one at hand.
_FORM_FOR_ALL_RE = re.compile(r"^(?:(?:and|also|oh and|but)\s+)?(?:please\s+)?(?:always\s+)?(?:write|give me|do|make|send|lay out|format|set out|present)\s+"
                              r"(?:the |my |your |all )?(?:[\w-]+\s+){0,2}[\w-]+s\s+(?:as|in)\s+(?:a |an )?"
                              r"(?:tables?|bullet ?points|bullets|lists?|numbered lists?|checklists?|markdown|plain text)\b", re.IGNORECASE)


def classify(sentence: str, *, role: str) -> str | None:
    if role == "user" and (_STANDING_ASK_RE.search(sentence) or _FORM_FOR_ALL_RE.search(sentence)):
        return "instruction"
    if QUESTION_RE.search(sentence):
        return None
    if REQUEST_RE.search(sentence) and not STRONG_RE.search(sentence) and not _RECURRING_REMINDER_RE.search(sentence) \
            and not NOTE_IT_DOWN_RE.search(sentence):
        return None
    if role == "assistant":
        # An assistant's prose is mostly narration; only the files it produced are facts.
        # A suggestion that names a file ("I'd suggest we keep what I added to conftest.py") produced nothing.
        produced = ARTIFACT_RE.search(sentence) and not PROPOSAL_RE.search(sentence)
        return "artifact" if produced and file_mentions(sentence) else None
    for category, pattern in PATTERNS:
        if pattern.search(sentence):
            return category
    if ARTIFACT_RE.search(sentence) and file_mentions(sentence):
        return "artifact"
    return None


# "Reminder: trains only", "提醒一下，…": a restatement says the memory again, the lead-in is not part of it.
RESTATED_RE = re.compile(
    r"^(?:(?:just )?(?:a )?reminder[:,：]?\s*|as i (?:said|mentioned)(?: before| earlier)?[,:]?\s*|like i said[,:]?\s*|again[,:]\s*|once more[,:]\s*"
    r"|提醒一下[，,：:]?\s*|再说一遍[，,：:]?\s*|上次说的[，,：:]?\s*|之前说过[，,：:]?\s*|还是那句话[，,：:]?\s*)",
    re.IGNORECASE,
)
# Said as a repeat of something said before, anywhere in the sentence.
RESTATE_MARK_RE = re.compile(
    r"\b(as i (said|mentioned|told you)|like i (said|told you|mentioned)|i told you(?! (?:something |the )?wrong\b| \w+ (?:wrong|incorrect)\b)|as i said before|reminder|just to repeat|as before|once again"
    r"|same as (always|before|usual|last time)|as (always|usual)|(and|oh|also|plus) the usual)\b|^again\b"
    # ("make sure it can't happen again": the thing may recur, nothing is said again.)
    r"|\b(?<!happen )(?<!happens )(?<!occur )(?<!recur )(?<!break )(?<!fail )(?<!crash )(?<!go down )again[.!]?$"
    r"|之前说过|我说过|说过了|还是那句|还是.{1,10}的事|提醒一下|再说一[遍次]|老规矩|再强调一(?:下|遍|次)|重申|照旧|老样子|(这个|节奏|安排|计划)不变"
    r"|(跟|和|同)(以前|之前|往常|平时|上次)(说的|讲的|定的|说过的)?一样|像往常一样|一如既往|(这条|这个|这点)(别动|不动|不变|保持不变)",
    re.IGNORECASE,
)
# An offer to do something now ("want me to compare them?") is a one-off; accepted, it is
# kept only when it sets up something lasting (a rule, a tool, a check).
OFFER_RE = re.compile(r"\b(shall i|should i|want me to|do you want me to|would you like me to|let me|i can|i could)\b|要不要我|需要我|要我|我可以(帮你)?", re.IGNORECASE)
DURABLE_RE = re.compile(
    r"\b(rule|always|never|every|each|weekly|daily|monthly|regularly|must|should|convention|policy|add|enable|set up|install|introduce|adopt|switch|use|require|enforce|check)\b"
    r"|规则|以后|统一|都要|每次|每周|每天|每月|每晚|每个|定期|加上|启用|接入|改用|引入|要求|必须", re.IGNORECASE)

# An instruction for this occasion only ("skip the e2e suite this time", "今天先别合并"): what
# to do now, not a rule to keep. Both parts must be there: the occasion (this time, today,
# 这次, 今天…) and a do-not / skip verb said to someone, not of oneself ("I skipped lunch
# today" is an event); a lasting marker (from now on, 以后, 每次, 从今天开始…) makes it a
# rule again, and a reminder ("don't forget to renew the cert today") is a task.
OCCASION_RE = re.compile(
    r"\b(this time|just this once|this once|(for|on) this (deploy|release|run|build|pr|merge|one)|for today|today|tonight)\b"
    r"|这次|这一次|这回|本次|今天|今晚", re.IGNORECASE)
HOLD_OFF_RE = re.compile(
    r"(^|[,;:]\s*|\b(please|just|let's|we'll|we can)\s+)(skip|don't|do not|no need to|hold off( on)?|leave out|bypass|ignore)\b"
    r"|\b(skip|hold off on|leave out|bypass)\b.*\b(this time|just this once|this once|for today|today|tonight)\b"
    r"|先别|先不要|先不用|先跳过|跳过|先不|暂时不|不要|不用(?!担心|谢)|别(?!忘)", re.IGNORECASE)
# An exception asked for the thing at hand ("Make this one formal", "keep this email short"): for
# that one only, whatever it asks.
EXCEPTION_RE = re.compile(r"^(?:(?:ok|okay|and|oh|please|but),?\s+)*(?:make|keep|write|do|send|sign)\s+this\s+(?:one|email|message|reply|note|draft|letter)\b(?!\s+of\b)",
                          re.IGNORECASE)
LASTING_RE = re.compile(r"\b(from now on|always|never|every|each time|going forward|in future|in the future|as a rule"
                        r"|starting today|from today(?!['’]s)|as of today|any ?more)\b"
                        # ("中英文都要": both are wanted, not always.)
                        r"|以后|今后|每次|每回|一律|(?<![中英文语])都要|都不|从现在起|开始|永远|总是|不再|再也|从不|从来不|绝不|决不", re.IGNORECASE)
SELF_SUBJECT_RE = re.compile(r"\bi\b|(?<![帮给让叫替为])我(?!们)", re.IGNORECASE)  # "帮我挑…" asks; "我今天不吃" says
TODAY_REMINDER_RE = re.compile(r"\b(don't forget|do not forget|remember to)\b|别忘|不要忘|记得", re.IGNORECASE)  # a task for today


# Occasions a request can be for ("for the 4 July sale only").
_OCCASION = r"(?:sale|auction|event|day|weekend|week|night|evening|show|launch|fair|match|game|trip|party|meeting|release|demo|open day|market)"
# Said to be for once only ("帮我出 5 道题，就这一次", "只补这一次", "just this once"): whoever
# the subject, whatever the verb.
ONLY_ONCE_RE = re.compile(r"(?:这次|这回)就(?:行|好|可以)(?!了吧)|(?:^|(?<=[\s，,。；;])|(?<=另外)|(?<=还有))(?:就|只)?(?:这次|这回|这一次|今次)(?:\s*(?:one[- ]?time|only|just(?:\s+once)?|once))?\s*[,，]?\s*(?:就|先|只)?\s*(?:你)?(?:帮我|帮手|帮个忙|麻烦你?|help\s?我)|[,，]\s*(?:just\s+)?this once\b|^\s*one[- ]off\s*[:：]|\bone[- ](?:time|off) (?:job|thing|task|request|favou?r)\s*[:：]|\bjust\s+(?:\w+\s+){1,5}?this once\b|\b(?:it's|it is|this is|just) a one[- ](?:off|time)\b|\b(just this once|only this once|this one time only|just this one time|(a |it's a |just a )?one[- ]time thing|(a |it's a |just a )?one[- ]off thing"
                          r"|just for (this run|this once|today|tonight|tomorrow|now)|just for this( (monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|weekend|morning|afternoon|evening))?(?=\s*[:：,，.!]|\s*$)|for this run only|(just |only )?for this (reply|answer|response|message|question)( only)?|(a |one )?one[- ]off request|normally\b.{0,80}\bbut for this one|(don't|do not|dont) make a habit of (it|this)|(don't|do not) make (it|this) (a|the) (config |new )?default"
                          # "for tonight (2026-09-05) only: …", "tonight only, would you …", "not a regular thing",
                          # "don't change the default in the config".
                          r"|for (today|tonight)( \([^)]{1,20}\))? only|(today|tonight)( \([^)]{1,20}\))? only(?=\s*[:：,，.!]|\s*$)|not a (regular|usual|standing|permanent) thing|(don't|do not) change the default"
                          # "for tonights publish only, title the post …", "as a one off invitational".
                          r"|for (today|tonight)'?s ([\w-]+ ){1,2}only|as a one[- ]off)\b"
                          r"|(?:就|只|仅)今(?:天|晚)|就这(?:两|几)天|临时(?:加(?!班)|改|开|关|挂|换|用)|今天就(?:先)?(?:这样|这么)|(?:今天|这次|这回)就?用[^，。]{1,12}(?:回|答|写|说|讲)(?:我)?(?:一次|一下|几句|两句)"
                          # "这次帮我用繁体写一份…": a script or language asked for this time.
                          # ("这次先帮我用英文写一段", "这次帮我用 BM 写"; "只是这次", "仅此一次").
                          # ("这次回复你用繁体字写吧": the reply's script, this time.)
                          r"|(?:这次|这回)(?:的)?(?:回复|回答)?(?:先|就)?(?:你)?(?:先)?(?:帮我|给我)?(?:先)?用\s?(?:繁体|简体|英文|英语|中文|粤语|广东话|白话|台语|闽南话|上海话|四川话|日文|日语|韩文|韩语|法语|德语|拼音|表格"
                          r"|[A-Za-z][A-Za-z ]{0,15}?\s?(?=写|回|翻|发|讲|说))|只是这一?次|只有这一?次|仅此一次"
                          # "這次幫我把行李清單排成表格": an output made in a form for once.
                          r"|(?:这次|这回)(?:你)?(?:帮我|给我)(?:把[^，,。！!]{1,24}?)?(?:排成|做成|整理成|弄成|列成|画成)(?:一个|一张|一份)?(?:表格|清单|列表|checklist|图表|PDF|表)"
                          # "这次破个例，直接拿真实目录跑一下": an exception made for once.
                          r"|破个?例"
                          # "别写成 rule 也别进 code", "不用做成功能": asked not to be made a rule or a feature; "下周回来照旧": the
                          # usual comes back after the occasion.
                          r"|(?:别|不要|不用|不必)(?:把它|把这个)?(?:写成|做成|变成|当成|弄成|搞成|存成)\s*(?:一条|一个)?\s*(?:rule|规则|规矩|功能|feature|config|配置|默认)"
                          r"|\b(?:don't|do not|no need to) (?:make|turn) (?:it|this|that) into an? (?:rule|feature|setting)\b"
                          r"|(?:回来|之后|过后|完了|结束后?)(?:就|再)?(?:照旧|照常|恢复原样|恢复正常)"
                          # "use --no-verify on this one", "就这一回".
                          r"|^一次性的?(?:啊|哈|哦|喔|啦)?(?=[\s，,。!！])|\b(?:just |only )?on this one\b|\bfor this one only\b|\bjust for this one,?\s+(?=(?:can|could|would|please)\b)|\b(?:only|just) need (?:it|this|that|one) (?:the )?once\b"
                          # "for the 4 July sale only, we need a banner …", "just that one sale": an occasion, not a rule.
                          # "Just for Thursday's Women's Institute meeting, could you write me …".
                          r"|\bjust for (?:this|that|the|tonight'?s|tomorrow'?s|today'?s|\w+day'?s|next \w+'?s)\s[^,.;:!?]{0,40}?\b" + _OCCASION + r"\b"
                          r"|\bfor (?:the|this|that|our) [^,.;:!?]{0,30}?\b" + _OCCASION + r" only\b|\b(?:just|only) (?:that|this) one " + _OCCASION + r"\b"
                          r"|就这一次|就这次|就这一回|就这回|(?:就|只)这一?(?:个)?(?:周|星期|礼拜|月)(?=\s*(?:[，,。！!~～]|哈|啊|吧|$))|仅此一次|只此一次|只(?:[用要做跑导发写])?这一回|下不为例|只(?:[补做用要写发跑改]这)?一次|(?:^|[，,。\s])就(?:这|这么)一个(?:文件|类|函数|方法|地方|页面|接口)?\s*[。！!]?$", re.IGNORECASE)


_THIS_OCCASION_RE = re.compile(r"\b(this time|this once|for this (deploy|release|run|build|pr|merge|one))\b|这次|这一次|这回|本次", re.IGNORECASE)
ASKING_CLAUSE_RE = re.compile(r"^\s*(?:and |also |so |then |oh )?(?:please |pls )?(?:can|could|would) you\b|^\s*(?:please|pls)\b|帮我|帮个忙|麻烦你?|请你|给我(?:写|做|出|弄|找)",
                               re.IGNORECASE)


# A request for once made of someone just told about ("write him a thank-you note", "给他写…").
_FOR_THEM_RE = re.compile(r"给(?:他|她)(?:们)?|\b(?:for|to) (?:him|her|them)\b|\b(?:write|send|text|thank) (?:him|her|them)\b", re.IGNORECASE)


_GIFT_RE = re.compile(r"礼物|礼品|\b(?:gifts?|presents?)\b", re.IGNORECASE)
_GIFTED_ON_RE = re.compile(r"生日|婚礼|满月|乔迁|毕业|纪念日|party|派对|\b(?:birthday|wedding|christening|housewarming|shower|anniversary|leaving do|retirement do)\b",
                           re.IGNORECASE)


def said_before_the_request(sentence: str) -> str:
    """The clauses before the first one that asks for something ("今天 flash 了一条 V4, 视频拍下来了，
    帮我写个 caption 吧, just this once" → "今天 flash 了一条 V4, 视频拍下来了"): what a one-off
    request's sentence says besides the request; "" when it opens with the request."""
    clauses = re.split(r"(?<=[，,;；])", sentence)
    for i, clause in enumerate(clauses):
        if ASKING_CLAUSE_RE.search(clause) or ONLY_ONCE_RE.search(clause):
            said = "".join(clauses[:i]).strip().rstrip("，,;； ")
            asked = "".join(clauses[i:])
            # "这次 meetup 我想搞个 quiz": what is wanted for the occasion is the request's, too, and
            # so is what shares a naming word with it ("he only thinks in Fahrenheit … in Fahrenheit
            # just for today", "想看看你会不会说粤语，今天就用粤语回我吧，就今天哈").
            # A request introduced by "so" / "所以" has its reason before it: that belongs to it too.
            # A gift asked for an occasion just told of ("朵朵下周要去同学 Ethan 的生日 party，这次帮我挑个 … set 当礼物吧"): the
            # occasion is what the request is for.
            if len(said) < 8 or one_off(said) or _THIS_OCCASION_RE.search(said) or naming_words(said) & naming_words(asked) \
                    or re.match(r"\s*(so|and so|所以|因此|于是)\b", asked, re.IGNORECASE) or (_GIFT_RE.search(asked) and _GIFTED_ON_RE.search(said)):
                return ""
            return said
    return ""


_QUESTION_CLAUSES_RE = re.compile(r"(?<=[，,;；])|(?<=[\u4e00-\u9fff\d]\s)(?=[\u4e00-\u9fff])")


def said_before_the_question(sentence: str) -> str:
    """The clauses before a question that ends the sentence ("下个月想带女儿去拍萤火虫，有啥要注意的吗" →
    "下个月想带女儿去拍萤火虫"); "" when the sentence is one question or asks nothing. Unpunctuated Chinese ends a
    clause with a space ("下个目标：6 月 8 号大学毕业 20 周年聚会 想穿上当年那套西装 … 你看来得及吗")."""
    clauses = _QUESTION_CLAUSES_RE.split(sentence)
    if len(clauses) < 2 or not QUESTION_RE.search(clauses[-1]):
        return ""
    said = "".join(clauses[:-1]).strip().rstrip("，,;； ")
    return "" if QUESTION_RE.search(said) or REQUEST_RE.search(said) else said


# "就这一次哈，以后还是中文": what holds again after the occasion is no lasting change of its own; nor
# is the user doing it themselves next time ("就这一回，以后这种我自己写").
BACK_TO_USUAL_RE = re.compile(r"\b(?:and )?(?:then )?never again\b|以后(?:还是|照常|照旧|恢复)|以后(?:也)?不(?:一定|见得)(?:会)?(?:再)?(?:要|用|需要|做)|以后(?:就)?不用(?:你)?(?:再)?(?:帮我|给我)?(?:写|发|做|弄|搞|管|操心)(?:这个|这些|这种|了)?|以后(?:就)?不用(?:了|啦)?(?=\s*[。.!！~～]*\s*$)|平时(?:还是|照常|照旧)|以后(?:这种|这类|这些)?(?:的)?(?:我|我们|她|他|她们|他们)(?:就)?自己(?:在[^，,。\s]{1,6})?(?:来|写|弄|做|搞|发|看|查|导)"
                               r"|\b(?:from now on|after this|in future|next time) i'?ll (?:do|write|send|handle) (?:it|them|these|those)(?: myself)?\b|\b(?:otherwise|after that) (?:as usual|back to normal)\b"
                               r"|\b(?:it's|it is|we're|we are|then)\s+back to (?:the )?(?:normal|usual)\b", re.IGNORECASE)


# "every" of things, not of times ("wants every Northern Soul 45 we've got", "every job from the last tax
# year"): what the one-off request is about, not a sign that it lasts ("every Monday", "every time" are).
_EVERY_THING_RE = re.compile(r"\bevery\s+(?!(?:time|day|week|month|year|morning|afternoon|evening|night|weekend|hour|minute|[a-z]*day)s?\b)[\w-]+",
                             re.IGNORECASE)


# Said in so many words that it is for this once ("just this once can you write a little note for mum's neighbour
# Brenda, she's been popping in every evening", "这次帮我写个朋友圈文案 就发这一次 说我证拿到了 开始自己接活"): only
# a word of what holds from now on makes it last; "every evening" and "开始" tell what the note says.
# "bracket 今天先 hardcode 一下吧 来不及写 generator 了 … 下周再说": a stopgap for now, the real thing put off.
_PUT_OFF = r"(?:下周|下次|回头|以后|之后|明天|改天)再(?:说|弄|搞|写|做)"
_SAID_ONCE_RE = re.compile(r"\b(?:just|only) this once\b|\bthis one time only\b|就(?:发|写|用|做|弄|这么)?这一次|\bjust (?:for )?this week\b|\bthis week only\b"
                           # "今天 only: Mdm Kavitha 的 endocrinologist 要她过去三个月的 progress, 帮我 export 一个 PDF": for today
                           # (ONLY_ONCE_RE reads "today only:" and "只今天").
                           r"|(?:今天|今晚)\s*only\s*(?=[:：,，.!]|$)|\bonly (?:for )?(?:today|tonight)\s*(?=[:：,，.!]|$)|只(?:是|限)(?:今天|今晚)(?:的|一次)?(?:[:：,，]|\s)"
                           # "this time only 帮我写成粤语口语", "今天破个例：… 就今天 … 明天开始照常".
                           r"|\bthis time only\b|\bonly this time\b|(?<![不没])破(?:个|一次|一回)?例|(?:^|(?<=[\s，,：:]))就今天(?=[\s，,。!！~～]|$)"
                           # "今天就用天津话跟我聊": a way of talking for today.
                           r"|(?:今天|今晚|这次|这回)就?用[^，,。\s]{1,8}?(?:话|语|文|腔)(?:跟我|和我|给我)?(?:聊|说|讲|回|写)"
                           r"|(?:今天|今晚|这次|这回)先[^，,。；;！!]{1,24}?吧(?=.*" + _PUT_OFF + ")", re.IGNORECASE)
_PUT_OFF_RE = re.compile(_PUT_OFF)
_FROM_NOW_ON_RE = re.compile(r"\b(?:from now on|going forward|in (?:the )?future|as a rule)\b|以后|今后|从现在起|一律", re.IGNORECASE)


def one_off(sentence: str) -> bool:
    """An instruction for the occasion only: not a memory (SPEC §5: one-off requests)."""
    if _SAID_ONCE_RE.search(sentence) and not _FROM_NOW_ON_RE.search(BACK_TO_USUAL_RE.sub("", _PUT_OFF_RE.sub("", sentence))):
        return True
    if _exception_for_now(sentence) or (ONLY_ONCE_RE.search(sentence)
                                        and not LASTING_RE.search(BACK_TO_USUAL_RE.sub("", _EVERY_THING_RE.sub("", sentence)))):
        return True
    if not OCCASION_RE.search(sentence) or LASTING_RE.search(sentence) or SELF_SUBJECT_RE.search(sentence) \
            or TODAY_REMINDER_RE.search(sentence):
        return False
    return bool(HOLD_OFF_RE.search(sentence))


def _exception_for_now(sentence: str) -> bool:
    return bool(EXCEPTION_RE.search(sentence.strip())) and not LASTING_RE.search(sentence)


_TECH_NAME_RE = re.compile(r"\b[A-Z][\w.+#-]*\d[\w.-]*|\b[A-Z]{2,}\b|\b[A-Z][a-z]+[A-Z]\w*|\b[A-Za-z]+\s?v?\d+(?:\.\d+)+\b"
                           r"|\b[A-Z]{2,}[a-z]\w*|\b[A-Za-z]\w*\.js\b"  # "SQLModel", "SQLite"; "Next.js", "node.js"
                           r"|\b[A-Z][a-z]+\s\d{1,3}\b(?![.:/,]\d)"  # a name and its major version: "Astro 4", "Vue 3"
                           rf"|\b{HOST_PATTERN}\b")  # "modernc.org/sqlite", "fly.io"


STACK_LONG_ITEM_WORDS = 10
# A name typed in lower case with its major version, as an item of a list ("postgres 16", "node 22"):
# not a word that only says how many ("for 11", "about 30").
_LOWER_VERSIONED_RE = re.compile(r"^(?!(?:for|about|at|in|on|to|of|with|over|under|than|every|each|around|by|from|since|until|till|after"
                                 r"|before|only|just|maybe|like|top|page|day|week|year|room|floor|step|level|and|or)\b)[a-z][a-z-]{2,}\s\d{1,3}(?:\.\d+)*$")


# A line labelled as the stack ("stack: FastAPI + SQLModel + Postgres", "Stack：Next.js 14 + Supabase",
# "技术栈：后端 Go + Gin"): the label is no item, and its colon no sign of pasted output.
STACK_LABEL_RE = re.compile(r"^(?:(?:the|our)\s+)?(?:tech(?:nology)?\s+)?stack\s*[:：]\s*|^技术栈\s*[:：]\s*", re.IGNORECASE)


# Capitals that name no part of a stack ("…后端调他们 API 生成两个临时密码").
_GENERIC_CAPS = frozenset({"API", "APIS", "UI", "UX", "URL", "ID", "PDF", "CSV", "OK", "PR", "QA", "PM", "AM", "FAQ", "TODO"})


def _technical(item: str) -> str:
    """The technical name an item says (folded), or ""."""
    for pattern in (_TECH_NAME_RE, _LOWER_VERSIONED_RE, TOOL_RE):
        for m in pattern.finditer(item):
            if m.group().upper() not in _GENERIC_CAPS:
                return m.group().casefold()
    return ""


def stack_list(sentence: str) -> bool:
    """A bare list of what something is built with ("ESP32-S3, plain C, ESP-IDF 5.1 built through
    PlatformIO", "Go 1.22 + Postgres 16 + NATS"): short items, two or more of them technical names
    (written like one, or a service the tool table knows: "Supabase", "Vercel")."""
    if QUESTION_RE.search(sentence):
        return False
    labelled = bool(STACK_LABEL_RE.match(sentence.strip()))
    sentence = STACK_LABEL_RE.sub("", sentence.strip())
    # "sqlite through modernc.org/sqlite so there's no cgo. deploys on fly.io": an item's reason
    # ("so …", "because …") is no item of its own, and a lower-case sentence after it goes on the list.
    # An aside in brackets is no item ("one Hetzner box (CX32 in Falkenstein, yes germany, …)").
    bare = re.sub(r"\s*[(（][^()（）]*[)）]", "", sentence.strip()).rstrip(".。!！")
    items = [re.sub(r"\s+\b(so|because|since|which means)\b.*$", "", i, flags=re.IGNORECASE).strip()
             for i in re.split(r"[,，、;；+]|\band\b|\.\s+(?=[a-z])", bare) if i.strip()]
    items = [part.strip() for i in items for part in (_with_split(i) or [i])]
    # One item of a longer list may say where it all runs ("django 5.0, postgres 16, htmx for the
    # fiddly bits, all in docker compose on one Hetzner box").
    long = [i for i in items if len(i.split()) > 5]
    # Not tool output ("Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 2.314 s <<< FAILURE!").
    fits = not long or (len(items) >= 3 and len(long) == 1 and len(long[0].split()) <= STACK_LONG_ITEM_WORDS and not re.search(r":\s*\d", bare))
    # Labelled a stack, its items may be said at length ("Stack: Django 5, a SQLite file on the server,
    # plain server-rendered templates with a sprinkle of htmx").
    fits = fits or (labelled and all(len(i.split()) <= STACK_LONG_ITEM_WORDS for i in long))
    # Two names, not one said twice ("先用 Stripe 吧，就 Stripe Checkout 那种 hosted page").
    names = [n for n in map(_technical, items) if n]
    return len(items) >= 2 and fits and len(names) >= 2 and len({n.split()[0] for n in names}) >= 2


def _with_split(item: str) -> list[str] | None:
    """"SQLite with Litestream streaming backups to a bucket": a technical name with another one, two items
    ("plain server-rendered templates with a sprinkle of htmx" is one)."""
    m = re.match(r"^(\S+(?:\s+v?\d[\w.]*)?)\s+with\s+(.+)$", item, re.IGNORECASE)  # ("Django 5 with HTMX on the front")
    return [m.group(1), m.group(2)] if m and _technical(m.group(1)) else None


def _bare_stack(sentence: str) -> bool:
    """A stack list that stands alone as a fact: no pasted output or document in it (a traceback's
    'File "…", line 732', "Progress: resolved 412, …", a bracketed header, a URL), and two names
    that are more than a short capitalised word ("OK, 转 WebP" is a reply, not a stack)."""
    sentence = STACK_LABEL_RE.sub("", sentence.strip())
    if re.search(r"[:：\"/=【】\[\]<>]|\bline \d", sentence):
        return False
    named = [m for m in _TECH_NAME_RE.finditer(sentence) if not re.fullmatch(r"[A-Z]{2,3}", m.group())]
    tools = [m for m in TOOL_RE.finditer(sentence) if not any(n.start() < m.end() and m.start() < n.end() for n in named)]
    return len({m.group().casefold().split()[0] for m in [*named, *tools]}) >= 2


ELABORATION_RE = re.compile(r"^(he|she|it|they|his|her|its|their|a|an|this one|that one)\b|^(她|他|它|他们|她们|一只|一个)", re.IGNORECASE)
ELABORATION_MAX_CHARS = 120
SPEAKER_FACT_MIN_WORDS = 4
FIRST_PERSON_RE = re.compile(r"\b(i|i'm|i've|my|me|we|our)\b|我", re.IGNORECASE)
# The user saying who they are ("i'm also a volunteer firefighter", "我自己是在银行做 iOS 开发的"), not what "we" do.
# ("im the shotfirer", "I was a live sound engineer for 14 years before this", "me and my partner maren run …").
ABOUT_ME_RE = re.compile(r"\bi(?:'m| am|m)\b|\bmy (?:day )?job\b|\bi (?:was|used to be|worked as) an?\b|\bme and my \w+(?: \w+)? (?:run|own|started)\b|我(?:自己|本人|以前|之前|原来|原先)?(?:是|在)|我(?:平时|白天|本职)"
                         r"|我(?:们)?(?:跟|和)[^，,。]{1,8}?(?:合开|合伙开)了?(?:个|一家|一间|家|间)", re.IGNORECASE)  # "我跟朋友在成都玉林合开了个 coworking space"
# Someone named with the role they hold for the project, either way round ("PM 是 Winnie", "Funmi's the new integration
# lead", "my contact at the trust is Gary Pritchard", "阿蛮是我们店长").
_TEAM_ROLES_EN = (r"(?:[\w-]+\s+){0,2}?(?:lead|manager|pm|po|product owner|owner|contact|point of contact|maintainer|admin|director|head|cto|ceo|cfo"
                  r"|architect|tech lead|designer|reviewer|accountant|bookkeeper|supervisor|boss|client|sponsor|coach|trainer|instructor|tutor)")
_TEAM_ROLES_ZH = (r"(?:店长|经理|负责人|组长|主管|老板|老板娘|产品经理|项目经理|对接人|联系人|甲方|财务|会计|运营|客服主管|技术负责人|架构师|设计师|测试|前端|后端"
                  r"|PM|PO|leader|lead|[\u4e00-\u9fff]{1,2}(?<![很太多好挺更最超较成擅延增生间特])长)")  # "裁判长", "馆长", "站长"
TEAM_ROLE_RE = re.compile(
    rf"\b(?:my|our|the)\s+(?:new\s+)?{_TEAM_ROLES_EN}\b(?:\s+[^,.;!?]{{0,40}}?)?\s+(?:is|'s)\s+(?-i:[A-Z])"
    rf"|(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?(?:'s|\s+is)\s+(?:now\s+)?(?:(?:my|our|the|their)\s+)?(?:new\s+)?{_TEAM_ROLES_EN}\b"
    rf"|\b(?:he|she|they)(?:'s|\s+is|'re|\s+are)\s+(?:the|our|my|their)\s+(?:new\s+)?{_TEAM_ROLES_EN}\b"
    # "the fresh meat group has a new coach, Tilly".
    rf"|\b(?:a|the|our|my)\s+new\s+{_TEAM_ROLES_EN}\s*[,:—–]\s*(?-i:[A-Z])[\w'-]+"
    rf"|(?:^|[\s，,]|(?<=[\u4e00-\u9fff]))(?:团队里|team\s?里|我们的?|项目的?)?\s*{_TEAM_ROLES_ZH}\s*(?:是|叫|[:：])\s*(?:[\u4e00-\u9fff]{{2,4}}|[A-Z][\w'-]+)"
    rf"|(?:[\u4e00-\u9fff]{{2,4}}|(?-i:[A-Z])[\w'-]+)\s*是(?:我们|咱们|我们的|咱们的|这边的?|那边的?)\s*(?:的)?{_TEAM_ROLES_ZH}"
    # "销售是我表哥韦建明在管": who is in charge of a part of the business.
    r"|[\u4e00-\u9fff]{2,4}是(?:我的?)?(?:表哥|表姐|表弟|表妹|哥哥?|姐姐?|弟弟?|妹妹?|老公|老婆|爸|妈|朋友|同学|同事|合伙人)?\s*(?:[\u4e00-\u9fff]{2,3}|(?-i:[A-Z])[\w'-]+)\s*在(?:管|负责|带|跟)",
    re.IGNORECASE)
# The speaker or the people close to them: what a plain statement in a chat is about.
SELF_RE = re.compile(
    r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself|we|we're|we've|we'll|we'd|our|ours|us"
    r"|he|he's|she|she's|his|her|him|they|they're|their)\b|我|咱|他|她", re.IGNORECASE)  # "He's diabetic": the people the user talks about
# Remarks about the world, not about anyone ("weather's been lovely", "taking care of
# ourselves is so important", "人生苦短"): small talk, even with a pattern's word in them ("人生第一个大 MOC" is a
# milestone, not a saying).
SMALL_TALK_RE = re.compile(
    r"\b(weather|life is|that's life|such is life|it is what it is|(is|are|'s) so (important|true|nice|lovely|good|hard|great)"
    r"|isn't it|hasn't it|aren't they|don't you think|contractually obliged|you only live once|isn't that)\b"
    r"|天气|人生(?!第一)|对吧|是吧|真好啊|好热啊|好冷啊|太难了", re.IGNORECASE)
# A sentence that only acknowledges ("ok thanks", "sounds good", "好的，谢谢"): its lead words.
ACK_LEAD_RE = re.compile(
    r"^(?:(?:ok(?:ay)?|thanks?|thank you|thx|great|perfect|cool|nice|sure|yes|yeah|yep|yup|no|nope|nah|haha+|lol|got it|sounds good"
    r"|good idea|will do|noted|fine|right|exactly|of course|wow|aww+|oh|ah|hmm+|ugh|please|just|so|anyway|well|also|and|but)\b[\s,.!~]*"
    r"|(?:好的?|谢谢|嗯+|哈哈+|收到|明白|行|可以|没问题|对|是的|太好了|好主意|好吧|那|哦|噢|啊)[\s，,。.!！~]*)+", re.IGNORECASE)
PROPER_NOUN_RE = re.compile(r"(?<=[\w,，\s])\b(?!I\b)[A-Z][a-zA-Z'\-]+")  # a capitalised word that does not open the sentence
CODE_SWITCH_RE = re.compile(r"[\u4e00-\u9fff].*\b[A-Za-z][A-Za-z'\-]{1,}\b|\b[A-Za-z][A-Za-z'\-]{1,}\b.*[\u4e00-\u9fff]")
EVENT_HINT_RE = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|last|next|ago|just|finally|recently|went|did|got|had|was|were|started|moved|bought|booked"
    r"|signed|finished|won|lost|met|saw|going to|gonna|will|plan|planning)\b|\b\w{3,}ed\b|\d{4}-\d{2}"
    r"|(去|来|买|搬|换|定|做|看|学|办|开|考|报|玩|参加|完成|拿到|见)了|昨天|今天|上周|上个月|去年|刚|下个?月|明年|下周|打算|准备|要去|变成", re.IGNORECASE)
# Something that went wrong where the project is used, told by the user (not a crash while developing,
# which is what a session is about anyway): a double booking, a site down on the day, a garment remade.
INCIDENT_RE = re.compile(r"\b(?:fell over|(?:kept |keeps )?falling over|blew up|went down|outage|it was chaos|total chaos|a disaster|double[- ]?book(?:ed|ing)|complained|complaint|post-?mortem"
                         # "we did a stocktake on saturday and 22 kegs are unaccounted for"
                         r"|unaccounted for|(?:gone|went|go|goes|going) missing)\b"
                         # "half the section leaders got 500s": the people the project serves met its errors.
                         r"|\bgot (?:5\d\ds|errors|error pages|timeouts|timed out)\b|\b5\d\d errors\b"
                         # "January's duty return came out at roughly double what it should be": a figure the project put out wrong.
                         r"|\b(?:double|twice|three times|triple|half) what (?:it|they|that) should (?:be|have been)\b"
                         # "storm Ingrid on the 2nd. ~70 quote requests in four days and the public request form kept falling over".
                         r"|\bstorm\s+(?-i:[A-Z])\w+"
                         # "the certificate had expired and caddy couldn't renew it".
                         r"|\b(?:certificate|cert|domain)\s+(?:had |has )?expired\b"
                         # "the hall wifi died about twenty minutes in", "那天店里断网了".
                         r"|\b(?:wi-?fi|internet|network|power|server|site|website|app|system|tablets?|printer|till|card (?:machine|reader))\s+"
                         r"(?:died|went down|cut out|dropped out|stopped working|crashed|was down)\b"
                         r"|出事了|事故|宕机|大事件|返工|投诉|差评|一星|翻车了|骂了|断网了|停电了|(?:系统|服务器|网站|小程序)(?:挂了|崩了|瘫了)"
                         # "上周台风过境 7月28号那天12个site断网 数据断了差不多20小时"
                         r"|台风|暴雨|断网|断电|数据断了"
                         # "8 月去 service AWS 那天 helicopter 因为 weather 取消了", "the boat was cancelled for the wind": plans
                         # the weather called off.
                         r"|(?:weather|天气|大风|大雪|大雾|下雨|暴雨)[^，,。！!]{0,8}?(?:取消|停飞|停航|停运)了"
                         r"|\b(?:cancell?ed|called off)\b[^.!?]{0,30}?\b(?:weather|storm|gales?|wind|snow|fog)\b"
                         # "The big storm on the 3rd took out the 4G mast on Unst".
                         r"|\b(?:took|knocked|taken) out (?:the|our|a|an|two|three)\b|\bthe (?:big |bad )?storm\b"
                         # "出口端那边初支开裂 … 系统报了红色报警 停工两天": what went wrong on the site the project watches.
                         r"|停工|开裂|塌方|险情|漏水|报了[^，,。\s]{0,4}报警"
                         # "磅房那根串口线被雷击了 连着地磅仪表一起烧了 停了两天收购"
                         r"|被雷(?:击|劈)|烧(?:坏|毁|掉)?了|停(?:了)?[一二两三四五六七八九十几\d]+天", re.IGNORECASE)
CONDITIONAL_RE = re.compile(r"^(?:if|when|whenever|in case|如果|要是|万一|假如|每次|一旦)", re.IGNORECASE)
# A name the speaker's side gives a thing ("a 1000 L copper pot we call Morag", "我们管它叫老黄").
_NAMED_BY_US_RE = re.compile(r"\b(?:we|i)\s+(?:call|named|nicknamed|christened)\s+(?:it\s+|her\s+|him\s+|them\s+)?(?-i:[A-Z])[\w'-]+|我们?管(?:它|她|他)叫", re.IGNORECASE)
# What the backend is built with, said first ("后端Java 17加Spring Boot 3.2，…").
BUILT_WITH_RE = re.compile(r"^(?:后端|前端|服务端)\s*(?:是|用|用的是|选的)?\s*[A-Za-z]")
# A unit that opens with a header naming rules ("现在的借阅规则：", "House rules:", "Our conventions:"):
# the sentences after it in the same message that no pattern takes are more of those rules.
RULES_HEADER_RE = re.compile(r"^[^:：。.!?！？]{0,16}(?:规则|规定|约定|规矩|rules|conventions|policy|policies)(?:也|都)?(?:写进去|记一下|记下来|如下)?\s*[:：]", re.IGNORECASE)
# A list introduced as rules, however worded ("few ground rules first, these matter more than the
# code tbh:", "house rules, pls stick to these:", "几条规矩先说清楚："): each item is one.
# ("And how I do tests, here and in everything else I write in Go: table-driven.", "one more standing thing for the
# repo: all UI text and anything in docs/ in British English.")
RULES_INTRO_RE = re.compile(r"(?:^|[.!?]\s+)[^:：。.!?！？]{0,40}\b(?:rules?|conventions|policies|standing (?:things?|requests?|orders?|instructions?)|how we work|how we do things|how (?:i|we) (?:do|write|run|name|structure|handle) [\w-]+|our (?:process|workflow))\b"
                            r"[^:：。.!?！？]{0,60}[:：]"
                            r"|^[^:：。!?！？]{0,20}(?:规则|规定|约定|规矩)[^:：。!?！？]{0,20}[:：]", re.IGNORECASE)
# A header for how the assistant should answer ("Two things about how you talk to me.", "说两点你回答我的方式："):
# the imperatives after it in the message are rules even without "always" or "from now on".
HOW_TO_ANSWER_RE = re.compile(r"\b(?:things?|rules?|requests?|points?|notes?)\s+(?:about|on|for)\s+how\s+(?:you|u)\s+"
                              r"(?:talk|speak|write|reply|respond|answer)\b"
                              # "ok two things about how I want answers from you."
                              r"|\b(?:things?|rules?|requests?|points?|notes?)\s+(?:about|on|for)\s+how\s+i(?:'d)?\s+(?:want|like)\s+(?:answers|replies|things)\b|你(?:回答|回复|跟我说话|和我说话)的?方式", re.IGNORECASE)
IMPERATIVE_RE = re.compile(r"^(?:(?:and|also|oh and|but|so)\s+)?(?:please\s+|pls\s+)?(?:be|give|don't|do not|keep|use|stop|never|always|tell|say"
                           r"|write|answer|reply|call|skip|put|make|avoid|send|show|add|include|talk|speak|no)\b"
                           # "and bullet points please, as short as you can": the form answers come in.
                           r"|^(?:(?:and|also|oh and)\s+)?(?:in\s+)?(?:bullet ?points?|bullets|tables?|numbered lists?|short answers|plain text)\b"
                           r"|^if\b[^.!?]{1,80},\s*(?:just\s+)?(?:say so|tell me|say it)\b"
                           r"|^(?:还有|另外|以及)?[，,]?\s*(?:请|麻烦)?(?:别|不要|不用|直接|说话|回答|回复|用|给我|多|少)", re.IGNORECASE)
# The people close to the user, named without a pronoun ("想带女儿去拍萤火虫", "wife's birthday is in June").
KIN_RE = re.compile(r"\b(wife|husband|partner|son|daughter|kids?|mum|mom|dad|brother|sister|grandma|grandpa)\b"
                    r"|女儿|儿子|老婆|老公|孩子|爸|妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外婆|外公", re.IGNORECASE)
REPORT_LEAD_MAX_CHARS = 40  # a lead of a report that heads its first item even when the item is a report of its own
STATEMENT_MIN_WORDS = 3  # English content words of a plain statement ("Huge." and "Just venting." say nothing)
STATEMENT_MIN_ZH_CHARS = 5


def names_project(sentence: str, names: set[str]) -> bool:
    """Whether a statement (not a question or request) names one of the known projects."""
    if QUESTION_RE.search(sentence) or REQUEST_RE.search(sentence):
        return False
    low = sentence.casefold()
    return any(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", low) for name in names)


def _done_across(earlier: str, sentence: str) -> bool:
    """An assistant's report of work done said over two sentences: the file named in the first and
    the change in the second, or the change heading a list ("Added the job sheet:") and the file in
    its first item."""
    if file_mentions(earlier):
        return bool(ARTIFACT_RE.search(sentence)) and not PROPOSAL_RE.search(sentence)
    return earlier.rstrip().endswith((":", "：")) and bool(ARTIFACT_RE.search(earlier)) and not PROPOSAL_RE.search(earlier) \
        and not _NOTHING_DONE_RE.search(earlier) and bool(file_mentions(sentence))


_DONE_LEAD_RE = re.compile(r"^\W*(?:(?:both|all|ok|okay)[,，]?\s+)?(?:done|finished)\b\s*[.!:：—–-]?\s*$|^(?:都|已经)?(?:搞定了?|(?:做|改|弄|接|换|加|写|修|配|装|建|迁|调)好了)\s*[。！!：:]?\s*$",
                           re.IGNORECASE)


# An item that reports what was taken away ("删掉 `pawdesk/celery.py`、…", "Removed `railway.toml`"): nothing produced.
# ("`recon/ocr/` 整个删掉，…": the file first, then what happened to it.)
_REMOVED_ITEM_RE = re.compile(r"^[\W\d]*(?:`[^`\n]{1,80}`\s*)?(?:(?:整个|全部)?(?:删掉|删除|去掉|移除|拿掉)|(?:removed|deleted|dropped)\b)", re.IGNORECASE)


# "Things I noticed while reading, not changed:", "Ran it from the shell, no code added to the repo:": a
# list headed by what was not done.
_NOTHING_DONE_RE = re.compile(r"\b(?:not|no|nothing|never|without)\b|没|未|不", re.IGNORECASE)


# "上周日出大事了", "bad one last Tuesday", "something happened at the shop": a short sentence that only says
# something happened; the story is in the sentence after it.
_STORY_LEAD_RE = re.compile(r"出(?:了)?(?:件|个)?大?(?:事|事故|状况|岔子)了|\b(?:bad|rough|weird|awful|crazy) (?:one|night|day|morning|evening|afternoon|week|weekend|shift|news)\b"
                            r"|\bsomething (?:bad |weird |awful )?happened\b", re.IGNORECASE)
STORY_LEAD_MAX_WORDS = 6
_LEAD_IN_SENTENCE_RE = re.compile(r"^(.{2,40}?[.!:：。！])\s+\S")


def story_lead(sentence: str) -> bool:
    sentence = DATE_NOTE_RE.sub("", sentence)  # "上周日（2026-05-10）出大事了": the date the words resolve to
    short = len(content_tokens(sentence)) <= STORY_LEAD_MAX_WORDS if not is_chinese(sentence) else len(sentence) <= 2 * STORY_LEAD_MAX_WORDS
    return short and bool(_STORY_LEAD_RE.search(sentence)) and not QUESTION_RE.search(sentence)


def _joined_story(lead: str, story: str) -> str:
    lead = lead.rstrip()
    if re.search(r"[.!?:：。！？]$", lead):
        return lead + ("" if is_chinese(story) else " ") + story
    return lead + ("：" if is_chinese(story) else ". ") + story


def small_talk(sentence: str) -> bool:
    return bool(SMALL_TALK_RE.search(sentence))


def plain_statement(sentence: str) -> bool:
    """A chat sentence no pattern claims that still says something about the user's life:
    not a question, a request or an acknowledgement, long enough, and about the speaker or
    the people close to them (I, my, 我…), a name, or a value ("芝麻是英短，三岁", "Budget
    大概 £25k", "第一周在 Grab 感觉很好")."""
    if QUESTION_RE.search(sentence) or (REQUEST_RE.search(sentence) and not STRONG_RE.search(sentence)) or small_talk(sentence):
        return False
    rest = ACK_LEAD_RE.sub("", sentence.strip())
    words = [t for t in content_tokens(rest) if not is_chinese(t)]
    zh_chars = sum(1 for ch in rest if "\u4e00" <= ch <= "\u9fff" and ch not in ZH_STOP_CHARS)
    if len(words) < STATEMENT_MIN_WORDS and zh_chars < STATEMENT_MIN_ZH_CHARS and len(words) + zh_chars // 2 < STATEMENT_MIN_WORDS:
        return False
    return bool(SELF_RE.search(rest) or values(rest) or PROPER_NOUN_RE.search(rest) or CODE_SWITCH_RE.search(rest)
                or KIN_RE.search(rest) or SUBJECTLESS_ZH_RE.match(rest) or _BODY_HURT_ZH_RE.search(rest) or _RESULT_BACK_RE.search(rest)
                or _AWARD_ZH_RE.search(rest))


# "crossmatch came back negative", "the biopsy results came back clear": a result of the user's tests, told without "my".
_RESULT_BACK_RE = re.compile(r"\b(?:came|come|comes|has come|have come) back\s+(?:all\s+)?(?:negative|positive|clear|normal|abnormal|fine|ok|okay|good|bad|benign|high|low)\b",
                             re.IGNORECASE)
# Chinese drops the subject it means ("在西安 医院财务科上班", "右手腕有腱鞘炎 做账做出来的"): in a chat, where the
# user works or studies and what their body has are about the user.
# "最近在做人生第一个大 MOC：武康大楼": what the user has been doing lately.
SUBJECTLESS_ZH_RE = re.compile(r"(?:在[\u4e00-\u9fff]{1,8}\s?[\u4e00-\u9fff]{0,10}(?:上班|工作|上学|读书|实习)"
                               r"|(?:最近|这阵子|这段时间|今年)(?:一直|正|刚)?(?:在|开始)(?:做|学|练|弄|搞|准备|拼|写|画|织|备考|读|装修|种)"
                               r"|(?:左|右)?(?:手腕|手指|腰椎?|膝盖|膝|肩膀|肩|颈椎|脖子|腿|脚踝|眼睛|耳朵|胃)(?:有|一直|老是|经常)"
                               # "中午基本在单位食堂吃 晚上就看有没有应酬": where the user usually eats.
                               r"|(?:早上|早饭|中午|午饭|晚上|晚饭|平时|工作日)(?:基本|一般|通常|都|多半|基本上)?(?:都)?在[\u4e00-\u9fff]{1,8}吃)")
# "container A = basil in deep water culture, container B = …": a thing and what it is.
_ASSIGNED_RE = re.compile(r"(?:^|[,;，；]\s*)[A-Za-z\u4e00-\u9fff][\w ]{0,24}?\s=\s[^=,;，；]{3,}")
# "一诺参加区里的作文比赛 拿了一等奖！": a prize won, whoever the user names as winning it.
_AWARD_ZH_RE = re.compile(r"(?:拿了|拿到了?|得了|获得了?|评上了?)[^，,。！!？?\s]{0,8}?(?:[一二三特]等奖|奖|第[一二三]名|冠军|亚军|季军)")
# "前阵子死磕 F 左手食指 无名指 都磨起泡了": what happened to the body, wherever it is said.
_BODY_HURT_ZH_RE = re.compile(r"(?:手|脚|腿|腰|膝|肩|背|颈|眼|胃|牙|指|掌|腕)[^，,。！!？?]{0,8}?(?:磨(?:出|起|破)|起泡|水泡|肿了|扭伤|拉伤|骨折|发炎)")


def candidate_for(content: str, category: str, message: dict, *, mode: str, speaker: str = "") -> Candidate | None:
    table = CODE_TYPES if mode == "code" else CHAT_TYPES
    if category not in table:
        return None
    record_type, priority = table[category]
    if STRONG_RE.search(content) and category == "instruction":
        priority = -1 if mode == "chat" else 90
    return Candidate(
        content=content, type=record_type, priority=priority, category=category, message=message,
        language="zh" if is_chinese(content) else "en", task_state="done" if category == "task_done" else None,
        files=file_mentions(content), speaker=speaker,
    )


def extract_from_message(message: dict, *, mode: str, sentences: list[str] | None = None, speakers: set[str] | None = None,
                         positions: list[int] | None = None, project_names: set[str] | None = None) -> list[Candidate]:
    """Candidates of one message. Units, not sentences: an anaphoric sentence joins the one
    before it ("Use tabs in Go. Do the same for the Makefile." is one rule), a speaker label
    is kept on every unit of the turn, and relative dates are resolved against the
    message's time. `positions`: each given sentence's index in the message (a correction
    later in the same message applies to the units before it)."""
    content = str(message.get("content") or "")
    speaker, body = speaker_of(content)
    if speaker and speaker not in (speakers or set()):
        speaker, body = "", content  # "Retries: max 5 attempts" is a label, not a person
    role = "user" if speaker else str(message.get("role"))  # a named speaker is a person talking
    if sentences is None:
        parts = split_sentences(body)
    else:
        parts = [speaker_of(s)[1] if speaker and speaker_of(s)[0] == speaker else s for s in sentences]
    restated = [bool(RESTATE_MARK_RE.search(p)) for p in parts]
    parts = [RESTATED_RE.sub("", p).strip() for p in parts]
    found: list[Candidate] = []
    previous: Candidate | None = None
    unmatched: tuple[int, int, str] | None = None  # (index, position, text) of the sentence just before, when no pattern took it

    def unit(text: str, category: str, position: int, restated_here: bool) -> Candidate | None:
        """The candidate of one unit: relative dates resolved, the speaker named."""
        text = resolve_relative_dates(text, message.get("timestamp"))
        if speaker and not text.lower().startswith(speaker.lower()):
            text = f"{speaker}: {text}"
        cand = candidate_for(text, category, message, mode=mode, speaker=speaker)
        if cand is not None:
            cand.position, cand.restated = position, restated_here
            found.append(cand)
        return cand

    answer_rules = False  # a header said how the assistant should answer: its imperatives are rules
    # "Both done." / "做好了：" heading a reply: each item after it that names a file is work produced.
    done_report = role == "assistant" and bool(parts) and bool(_DONE_LEAD_RE.match(parts[0]))
    for n, sentence in enumerate(parts):
        position = positions[n] if positions and n < len(positions) else n
        if role == "user" and HOW_TO_ANSWER_RE.search(sentence) and not re.search(r"[:：]\s*\S", sentence):
            answer_rules, previous = True, None  # "Two things about how you talk to me." says nothing itself
            continue
        if len(sentence) < 6 or len(sentence) > 400:
            previous = None if len(sentence) > 400 else previous
            continue
        if previous is None and unmatched is not None and unmatched[0] == n - 1 and ANAPHORA_RE.search(sentence) \
                and len(unmatched[2]) + len(sentence) < 400:
            # "I write in British English: 'organise'. Please stick to that in anything you write
            # for me.": the rule is the pointer's, its content the sentence it points at.
            category, (_, earlier_position, earlier) = classify(sentence, role=role), unmatched
            if category is None and role == "user" and ON_THE_LIST_RE.search(sentence):
                category = "task"  # "can you put it on the list" asks, and what it puts there is the sentence before
            unmatched = None
            joined = earlier.rstrip() + ("" if is_chinese(sentence) else " ") + sentence
            cand = unit(joined, category, earlier_position, restated[n]) if category else None
            if cand is not None:
                previous = cand
                continue
        if previous is not None and ANAPHORA_RE.search(sentence) and len(previous.content) + len(sentence) < 400:
            previous.content = f"{previous.content.rstrip()} {sentence}" if not is_chinese(sentence) else previous.content.rstrip() + sentence
            if classify(sentence, role=role) == "instruction" and previous.category != "instruction":
                upgraded = candidate_for(previous.content, "instruction", message, mode=mode, speaker=speaker)
                if upgraded is not None:
                    upgraded.position = previous.position
                    found[found.index(previous)] = upgraded
                    previous = upgraded
            continue
        if role == "user" and one_off(sentence):
            if previous is not None and previous.category in ("statement", "statement_event", "episode") and _FOR_THEM_RE.search(sentence):
                # "那天在 Ubin jetty, boatman Pak Rahman 帮我们搬 kayak 上岸. 这次帮我写一个 Malay 的 thank you message 给他":
                # what was just told is what the request for once is about.
                found.remove(previous)
            previous = None  # "这次先跳过 canary": what to do now, not a rule to keep
            sentence = said_before_the_request(sentence)  # what the sentence tells before asking
            if not sentence:
                continue
        category = classify(sentence, role=role)
        if category is None and answer_rules and role == "user" and IMPERATIVE_RE.match(sentence):
            category = "instruction"  # "Be blunt." after "Two things about how you talk to me."
        if category is None and role == "user" and RULES_INTRO_RE.search(sentence):
            category = "instruction"  # "house rules: `cargo fmt --check` and `cargo clippy` clean before anything merges"
        talk = role == "user" and (mode == "chat" or speaker) and category not in ("instruction", "task", "task_done") and small_talk(sentence)
        talk = talk or bool(speaker and category == "instruction" and not FIRST_PERSON_RE.search(sentence))
        if talk:
            category = None  # "taking care of ourselves is so important", "今天天气真好啊": small talk, not a memory
        if category is None and speaker and not talk and not QUESTION_RE.search(sentence) and len(content_tokens(sentence)) >= SPEAKER_FACT_MIN_WORDS:
            # Between people every turn that says something is evidence of what happened to whom
            # ("Tom: Take the 28 tram early, before the crowds."): kept as an event of the speaker.
            category = "episode"
        # "obsctl runs my backyard observatory. it's Rust (tokio), lives on an Intel NUC …": in code,
        # "it" after what the project is says more of the project, even where a pattern claims it.
        of_it = category == "fact" and mode == "code" and previous is not None and previous.category == "fact" \
            and re.match(r"(?:it's|it is)\b", sentence, re.IGNORECASE)
        after_lead = previous is not None and role == "user" and category is None and story_lead(previous.content)
        if (category is None or of_it) and previous is not None and not QUESTION_RE.search(sentence) and len(previous.content) + len(sentence) < 400 \
                and ((len(sentence) <= ELABORATION_MAX_CHARS and ELABORATION_RE.search(sentence)) or RULES_HEADER_RE.match(previous.content)
                     or (after_lead and not REQUEST_RE.search(sentence))):
            # "My sister just had a baby. A boy named Felix." — the second sentence belongs to the first;
            # so do the rules after a header ("现在的借阅规则：最多借 5 本，每次 30 天。逾期的不罚钱，暂停借阅 7 天"),
            # and the story after "上周日出大事了".
            text = resolve_relative_dates(sentence, message.get("timestamp"))
            previous.content = _joined_story(previous.content, text) if after_lead \
                else previous.content.rstrip() + ("" if is_chinese(text) else " ") + text
            continue
        intro = None
        if category is None and mode == "code" and stack_list(sentence):
            # What the project is, not who the user is ("I'm a physics teacher … stack: FastAPI + …").
            intro = previous if previous is not None and previous.type == "work_fact" and not ABOUT_ME_RE.search(previous.content) else next(
                (c for c in found if c.type == "work_fact" and c.message is message and not ABOUT_ME_RE.search(c.content)), None)
            if intro is None and role == "user" and _bare_stack(sentence):
                category = "fact"  # "Rails 7.1 + PostgreSQL，现在 host 在 Heroku。" with nothing said before it to join
        if intro is not None:
            if len(intro.content) + len(sentence) < 400:
                # "this repo is thermo-fw, the thermostat firmware. ESP32-S3, plain C, ESP-IDF 5.1." —
                # the list of what it is built with belongs to what it is, also when a sentence on
                # what it does stands between ("…溯源系统。每箱橙子贴一个二维码…。后端 Spring Boot 3 + …").
                intro.content = intro.content.rstrip() + ("" if is_chinese(sentence) and is_chinese(intro.content) else " ") + sentence
                continue
            # The introduction is already long ("this repo is seedvault, the catalogue for … in the
            # freezer room behind the lab. it's Elixir/Phoenix, LiveView …, Postgres 16 underneath"):
            # the stack is a fact of the project on its own.
            category = "fact"
        if category is None and mode == "code" and role == "user" and BUILT_WITH_RE.match(sentence):
            # "后端Java 17加Spring Boot 3.2，持久层MyBatis-Plus，库是MySQL 8，排队的实时状态放在Redis里":
            # what the backend is built with, when it is no bare list to join to the introduction.
            category = "fact"
        if category is None and mode == "code" and role == "user" and not talk and not one_off(sentence) and not QUESTION_RE.search(sentence) \
                and not REQUEST_RE.search(sentence) and any(kind in BUSINESS_VALUE_KINDS for kind, _ in values(sentence)) and plain_statement(sentence) \
                and not any(one_off(p) for p in parts) and not _BILL_PAID_RE.search(sentence):
            # "代加工的话 加工费每百斤 8 元", "delivery is free within 5km, $4.99 flat beyond", "buyer's premium is
            # 22% + VAT": a price or rate the project charges is a rule of its business (not the one of an occasion the
            # message asks for once: "next weekend Raya sale, 全部 singles 9 折 (10% off)。只是这一次 run"; not a bill the
            # project pays: "Twilio 的 bill 出来了 吓死, 一个月 RM 400+").
            category = "fact"
        if category is None and mode == "chat" and role == "user" and not talk and not restated[n] and not one_off(sentence) \
                and (QUESTION_RE.search(sentence) or REQUEST_RE.search(sentence)):
            # "我最近在准备跳槽，想从 data analyst 转 product manager，你能帮我 prep 一下面试吗": what the
            # user says of themselves before asking is kept; the request is not.
            said = said_before_the_request(sentence) or said_before_the_question(sentence)
            if said and plain_statement(said):
                sentence, category = said, "statement_event" if EVENT_HINT_RE.search(said) else "statement"
        if category is None and mode == "chat" and role == "user" and not talk and plain_statement(sentence):
            # A statement about the user's life is never dropped for lack of a pattern.
            category = "statement_event" if EVENT_HINT_RE.search(sentence) else "statement"
        if category is None and mode == "code" and role == "user" and not talk and plain_statement(sentence) \
                and (ABOUT_ME_RE.search(sentence) or len(_ASSIGNED_RE.findall(sentence)) >= 2) \
                and (any(c.type == "work_fact" and c.message is message for c in found)
                     or any(classify(p, role=role) == "fact" or (project_names and names_project(p, project_names)) for p in parts[n + 1:])):
            # "hi～ 这个 repo 叫 inkbook，…。我自己是在银行做 iOS 开发的，这个是下班帮她弄的 side project。": who the
            # user is, said where the project is introduced (before or after it: "I'm Marisol, I do AV and basically all the
            # software at the Brackenridge Planetarium …" / "domeshow is our booking + show scheduling app"); so is how it is
            # set up ("container A =
            # basil in deep water culture, container B = lettuce on NFT channels").
            category = "fact"
        if category is None and mode == "code" and role == "user" and not talk and not one_off(sentence) and not QUESTION_RE.search(sentence):
            # "team 里 PM 是 Winnie, priority 她定", "my contact at the trust for the CAD feed is Gary Pritchard, he's the
            # integration lead", "阿蛮是我们店长 … 给她在后台开个管理员账号": who holds which role for the project (said
            # before a request, the request is not).
            said = sentence if not REQUEST_RE.search(sentence) or STRONG_RE.search(sentence) else said_before_the_request(sentence)
            if said and TEAM_ROLE_RE.search(said) and plain_statement(said):
                sentence, category = said, "fact"
        if category is None and mode == "code" and role == "user" and not talk and INCIDENT_RE.search(sentence) and not CONDITIONAL_RE.match(sentence):
            # "Saturday was Apple Day … it was chaos. … the site fell over around 10:40", "五一有个新郎的西装，裤长做短了
            # 4 厘米，…，全店加班返工": what went wrong for the people the project serves is what its fixes answer.
            said = said_before_the_question(sentence) if QUESTION_RE.search(sentence) else sentence
            if said and INCIDENT_RE.search(said) and (EVENT_HINT_RE.search(said) or values(said)):
                sentence, category = said, "episode"
        if category is None and mode == "code" and role == "user" and not talk and _NAMED_BY_US_RE.search(sentence) and plain_statement(sentence) \
                and not QUESTION_RE.search(sentence) and not REQUEST_RE.search(sentence):
            # "our still is a 1000 L copper pot we call Morag, basically everything in the db hangs off her run numbers": the
            # name the team gives a thing of theirs is how they will speak of it from now on.
            category = "fact"
        if category is None and mode == "code" and role == "user" and project_names and names_project(sentence, project_names):
            # "notify-svc sends push notifications for the mobile app": what the project is.
            category = "fact"
        if category is None and done_report and n > 0 and file_mentions(sentence) and not PROPOSAL_RE.search(sentence) \
                and not _NOTHING_DONE_RE.search(sentence) and not _REMOVED_ITEM_RE.match(sentence):
            # "Both done. - Occupancy report: `reports/occupancy_report.py`, scheduled with celery beat …"
            category = "artifact"
        # ("都记下了，脱敏也已经改了：新增 `common/util/MaskUtil.phone()`…": a short lead that names no file heads a report of
        # its own too; a long one that names files says more than what the item did.)
        headed = category is None or (category == "artifact" and unmatched is not None and len(unmatched[2]) <= REPORT_LEAD_MAX_CHARS
                                      and not file_mentions(unmatched[2]))
        if headed and role == "assistant" and unmatched is not None and unmatched[0] == n - 1 \
                and _done_across(unmatched[2], sentence) and len(unmatched[2]) + len(sentence) < 400:
            # "Both come from internal/feed/rss.go: …. I changed explicit to emit true/false.": the
            # file is named in one sentence, the change said as done in the next; "Added the job sheet:"
            # heads the list whose first item names its file.
            _, earlier_position, earlier = unmatched
            unmatched = None
            previous = unit(earlier.rstrip() + ("" if is_chinese(sentence) else " ") + sentence, "artifact", earlier_position, restated[n])
            continue
        # "bad one last Tuesday. bloke rings at 11pm, says he's locked out of his flat in Kestrel Court.": the
        # lead says something happened, the next sentence what.
        told = role == "user" and unmatched is not None and unmatched[0] == n - 1 and story_lead(unmatched[2]) \
            and not QUESTION_RE.search(sentence) and not REQUEST_RE.search(sentence) and category not in ("instruction", "task", "task_done")
        if told and unmatched is not None:
            sentence, position, category = _joined_story(unmatched[2], sentence), unmatched[1], category or "episode"
        elif category is None and role == "user" and not talk and (lead := _LEAD_IN_SENTENCE_RE.match(sentence)) and story_lead(lead.group(1)) \
                and not QUESTION_RE.search(sentence) and not REQUEST_RE.search(sentence):
            # "bad week. brackley haulage rang up fuming, …": the lead run together with its story in one sentence.
            category = "episode"
        if category is None:
            previous = None
            unmatched = None if talk or QUESTION_RE.search(sentence) else (n, position, sentence)
            continue
        previous = unit(sentence, category, position, restated[n])
    return found
