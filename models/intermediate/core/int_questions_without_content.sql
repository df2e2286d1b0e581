-- The questions none of whose gold documents has content (int_question_gold_documents.gold_without_content): what
-- DocRec / PageRec means leave out (var retrieval_exclude_without_content), in the leaderboard and in
-- fct_question_metric_scores alike.

with gold_documents as (

    select * from {{ ref('int_question_gold_documents') }}

)

select
    dataset,
    question_id
from gold_documents
where gold_without_content
